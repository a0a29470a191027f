# (Module build rules go above this section: the `modules` target must build
# sroce.ko for the guest kernel given as KVER=<version>, e.g. 6.1.0-57-amd64,
# against /lib/modules/$(KVER)/build, leaving it at ./sroce.ko or
# build/modules/$(KVER)/sroce.ko. scripts/check calls `make modules KVER=...`.)

# --- tests and tooling ---
# deps:  install build/test dependencies (Debian, apt-get)
# check: host unit tests + module build + VM suites; closing "N passed, N failed"
#        KVERS="v1 v2" picks guest kernels, SROCE_DRV=sroce|rxe the driver under test
# demo:  boot a VM, bring up sroce0 on eth0, run ibv_rc_pingpong and ib_write_bw
# bench: (not yet)
TOOLING_ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
KVERS ?=
SROCE_DRV ?=

.PHONY: tooling-help deps check demo bench vm-check

tooling-help:
	@sed -n 's/^# \(deps\|check\|demo\|bench\|  *KVERS\)/  \1/p' $(TOOLING_ROOT)/Makefile

deps:
	$(TOOLING_ROOT)/scripts/deps

check:
	@KVERS="$(KVERS)" SROCE_DRV="$(SROCE_DRV)" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# VM suites only (no unit tests)
vm-check:
	@KVERS="$(KVERS)" SROCE_DRV="$(SROCE_DRV)" SKIP_UNIT=1 MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

demo:
	@SROCE_DRV="$(SROCE_DRV)" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/demo

bench:
	@echo "bench: not implemented yet"
