# SPDX-License-Identifier: GPL-2.0
# sroce top-level Makefile.
#
#   make [KVER=<ver>|KDIR=<dir>]   build ./sroce.ko (default: the running
#                                  kernel if its headers are installed, else
#                                  the newest installed Debian 6.1 headers)
#   make modules KVER=<ver>        build build/modules/<ver>/sroce.ko (and the
#                                  test module sroce_kverbs.ko), so one tree
#                                  serves several kernels side by side
#   make lint                      W=1 + sparse (C=2) for every installed
#                                  supported kernel, and checkpatch
#   make unit                      host unit tests of the wire codec
#   make install [KVER=<ver>]      build, install into /lib/modules/<ver>/updates
#                                  (DESTDIR honoured) and run depmod
#   make dkms-install              register the source with DKMS, which then
#                                  builds it for every kernel with headers
#   make deb                       build/deb/sroce-dkms_<version>_all.deb
#   make check / demo / bench      see the tests and tooling section below
SROCE_ROOT := $(patsubst %/,%,$(dir $(abspath $(firstword $(MAKEFILE_LIST)))))

# Supported kernel lines: Debian 12's 6.1 LTS and 6.12 LTS.
sroce_kvers = $(shell ls -d /usr/src/linux-headers-$(1)*-amd64 2>/dev/null | \
		sed 's|.*/linux-headers-||' | grep -v -e '-rt-' -e '-cloud-' | sort -V)
KVER_61 := $(lastword $(call sroce_kvers,6.1.))
KVER_612 := $(lastword $(call sroce_kvers,6.12.))
# The running kernel when its headers are installed, else the newest 6.1
KVER ?= $(or $(if $(wildcard /lib/modules/$(shell uname -r)/build),$(shell uname -r)),$(KVER_61))
KDIR ?= $(firstword $(wildcard /usr/src/linux-headers-$(KVER)) /lib/modules/$(KVER)/build)
LINT_KVERS ?= $(strip $(KVER_61) $(KVER_612))
SRC_PARTS := Kbuild drivers include uapi
# debian/changelog holds the version; dkms.conf and the package take it from there
SROCE_VERSION := $(shell sed -n '1s/^sroce (\([^)-]*\).*/\1/p' $(SROCE_ROOT)/debian/changelog)
DESTDIR ?=

.PHONY: all print-version modules lint unit clean install uninstall dkms-install dkms-remove deb

all:
	$(MAKE) -C $(KDIR) M=$(SROCE_ROOT) W=1 SROCE_VERSION=$(SROCE_VERSION) modules

# for scripts and tests: the one place the version is read
print-version:
	@echo $(SROCE_VERSION)

# Out-of-tree objects live next to their sources, so each kernel gets its own
# copy of the sources to build in.
modules:
	@test -d $(KDIR) || { echo "no kernel headers at $(KDIR) (scripts/deps)"; exit 1; }
	@rm -rf build/modules/$(KVER)/src && mkdir -p build/modules/$(KVER)/src
	@tar -C $(SROCE_ROOT) -cf - $(SRC_PARTS) | tar -C build/modules/$(KVER)/src -xf -
	$(MAKE) -C $(KDIR) M=$(SROCE_ROOT)/build/modules/$(KVER)/src W=1 SROCE_VERSION=$(SROCE_VERSION) modules
	@cp build/modules/$(KVER)/src/sroce.ko build/modules/$(KVER)/sroce.ko
	@rm -rf build/modules/$(KVER)/kmod && mkdir -p build/modules/$(KVER)/kmod
	@cp tests/kmod/Kbuild tests/kmod/*.c build/modules/$(KVER)/kmod/
	$(MAKE) -C $(KDIR) M=$(SROCE_ROOT)/build/modules/$(KVER)/kmod W=1 modules
	@cp build/modules/$(KVER)/kmod/sroce_kverbs.ko build/modules/$(KVER)/
	@echo "built build/modules/$(KVER)/sroce.ko and sroce_kverbs.ko"

# Built once per source change (make modules always rebuilds).
SRC_FILES := $(shell cd $(SROCE_ROOT) && find $(SRC_PARTS) -type f)
build/modules/$(KVER)/sroce.ko: $(SRC_FILES)
	$(MAKE) modules KVER=$(KVER)

install: build/modules/$(KVER)/sroce.ko
	install -D -m 0644 build/modules/$(KVER)/sroce.ko $(DESTDIR)/lib/modules/$(KVER)/updates/sroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/sroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

# The DKMS source tree: the module's sources and dkms.conf with the version.
build/dkms/sroce-$(SROCE_VERSION): $(SRC_PARTS) dkms.conf debian/changelog
	@rm -rf $@ && mkdir -p $@
	@tar -C $(SROCE_ROOT) -cf - $(SRC_PARTS) | tar -C $@ -xf -
	@sed 's/#MODULE_VERSION#/$(SROCE_VERSION)/' dkms.conf > $@/dkms.conf

dkms-install: build/dkms/sroce-$(SROCE_VERSION)
	dkms remove sroce/$(SROCE_VERSION) --all 2>/dev/null || true
	rm -rf /usr/src/sroce-$(SROCE_VERSION)
	cp -a build/dkms/sroce-$(SROCE_VERSION) /usr/src/
	dkms install sroce/$(SROCE_VERSION)

dkms-remove:
	dkms remove sroce/$(SROCE_VERSION) --all
	rm -rf /usr/src/sroce-$(SROCE_VERSION)

# Debian's own tooling (debhelper, dh-dkms) on a copy, so the tree stays clean.
deb:
	@rm -rf build/deb && mkdir -p build/deb/sroce-$(SROCE_VERSION)
	@tar -C $(SROCE_ROOT) -cf - $(SRC_PARTS) dkms.conf debian | tar -C build/deb/sroce-$(SROCE_VERSION) -xf -
	cd build/deb/sroce-$(SROCE_VERSION) && dpkg-buildpackage -b -us -uc
	@ls build/deb/*.deb

lint:
	@KVERS="$(LINT_KVERS)" $(SROCE_ROOT)/scripts/lint

unit:
	$(MAKE) -C tests/unit

clean:
	-$(MAKE) -C $(KDIR) M=$(SROCE_ROOT) clean
	rm -rf build/modules build/lint
	-$(MAKE) -C tests/unit clean

# --- tests and tooling ---
# deps:  install build/test dependencies (Debian, apt-get)
# check: host unit tests + module build + VM suites; closing "N passed, N failed"
# check-stress: the long netem stress suite (full level, every configuration)
#        KVERS="v1 v2" picks guest kernels, SROCE_DRV=sroce|rxe the driver under test
# check-ulp: kernel storage clients (NVMe-oF, NFS/RDMA, iSER, SRP) in full, both kernels
# check-pkg: make deb, DKMS and make install on the host, then in a VM on each
#        kernel: make install, dpkg -i the .deb (DKMS builds in the guest),
#        autoload and traffic, apt-get remove
# check-debug: basic, robust, ulp, interop and bounded stress on the debug guest
#        kernel (KASAN, lockdep, kmemleak; scripts/debug-kernel builds it once)
# demo:  boot a VM, bring up sroce0 on eth0, run ibv_rc_pingpong and ib_write_bw
# bench: rdma_rxe vs sroce perftest matrix in identical VM boots, ratio table
TOOLING_ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
KVERS ?=
SROCE_DRV ?=

.PHONY: tooling-help deps check check-interop check-stress check-ulp check-pkg check-debug demo bench vm-check

tooling-help:
	@sed -n 's/^# \(deps\|check\|demo\|bench\|  *KVERS\)/  \1/p' $(TOOLING_ROOT)/Makefile

deps:
	$(TOOLING_ROOT)/scripts/deps

check:
	@KVERS="$(KVERS)" SROCE_DRV="$(SROCE_DRV)" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# The full two-VM interop matrix: sroce vs rdma_rxe and sroce vs sroce.
check-interop:
	@KVERS="$(KVERS)" SKIP_UNIT=1 VM_SUITES=interop INTEROP_CONFIGS="$${INTEROP_CONFIGS:-sroce-rxe sroce-sroce}" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# The long two-VM netem stress run (tests/vm/stress.sh, Documentation/testing.md):
# full level, sroce vs sroce and sroce vs rdma_rxe, both sides on each kernel.
check-stress:
	@KVERS="$(KVERS)" SKIP_UNIT=1 VM_SUITES=stress STRESS_LEVEL="$${STRESS_LEVEL:-full}" STRESS_KVERS="$${STRESS_KVERS:-all}" STRESS_CONFIGS="$${STRESS_CONFIGS:-sroce-sroce sroce-rxe}" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# Kernel storage over the device, long form: 256 MiB per fio job; one VM
# (tests/vm/ulp.sh) on both kernels, then two VMs (tests/vm/ulp-pair.sh):
# sroce and rdma_rxe as target and host in every pairing. make check runs
# the one-VM form with 16 MiB on the last kernel.
check-ulp:
	@KVERS="$(KVERS)" SKIP_UNIT=1 VM_SUITES="ulp ulp-pair" ULP_FULL=1 ULP_KVERS=all ULP_PAIR_SIZE_MB="$${ULP_PAIR_SIZE_MB:-64}" ULP_PAIR_CONFIGS="$${ULP_PAIR_CONFIGS:-sroce-sroce sroce-rxe rxe-sroce}" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# Packaging: tests/pkg/check on the host, tests/vm/pkg.sh in the guests.
check-pkg:
	@KVERS="$(KVERS)" SKIP_UNIT=1 VM_SUITES=pkg MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# The suites on the debug guest kernel (KASAN, lockdep, kmemleak, list and
# object debugging), built once by scripts/debug-kernel: any report fails.
check-debug:
	@kv=$$($(TOOLING_ROOT)/scripts/debug-kernel | tail -n1) && [ -n "$$kv" ] || exit 1; \
	KVERS="$$kv" SKIP_UNIT=1 VM_SUITES="$${VM_SUITES:-basic robust ulp interop stress}" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

# VM suites only (no unit tests)
vm-check:
	@KVERS="$(KVERS)" SROCE_DRV="$(SROCE_DRV)" SKIP_UNIT=1 MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/check

demo:
	@SROCE_DRV="$(SROCE_DRV)" MAKE="$(MAKE)" $(TOOLING_ROOT)/scripts/demo

bench:
	@KVERS="$(KVERS)" $(TOOLING_ROOT)/scripts/bench
