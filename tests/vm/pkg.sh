#!/bin/bash
# Packaging suite, run INSIDE the test VM (tests/vm/run-suite -k KVER pkg,
# make check-pkg): sroce installed the ways a user installs it, never from
# the harness's copy of the module.
#   make_install  make install (the module make modules built on the host)
#                 lands in /lib/modules/<kver>/updates; rdma link add loads
#                 that very file; make uninstall takes it away
#   deb_install   dpkg -i the sroce-dkms package from make deb: DKMS builds
#                 the module for the running kernel in the guest
#   deb_traffic   rdma link add autoloads the DKMS-built module (its
#                 srcversion), ibv_rc_pingpong with data checks, counters
#   deb_remove    apt-get remove: module, DKMS registration and source gone
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"

KVER=$(uname -r)
VERSION=$(make -s --no-print-directory -C "$REPO" print-version)
DEB=$REPO/build/deb/sroce-dkms_${VERSION}_all.deb

# The loaded module's source checksum (MODULE_VERSION makes modpost add
# it): which build was loaded.
loaded_srcversion() { cat /sys/module/sroce/srcversion; }
# FILE|MODULE: its srcversion, never empty
srcversion_of() {
	local v
	v=$(modinfo -F srcversion "$1")
	[[ -n $v ]] || fail "$1 has no srcversion"
	echo "$v"
}

pkg_setup() {
	[[ -f $DEB ]] || fail "$DEB missing (make deb on the host)"
	[[ -f $REPO/build/modules/$KVER/sroce.ko ]] || fail "no make modules build for $KVER"
	! modinfo -F filename sroce 2>/dev/null || fail "a sroce module is already installed: $(modinfo -F filename sroce)"
	"$IP" -br addr show dev "$NETDEV"
}

t_make_install() {
	local f
	make -s -C "$REPO" install KVER="$KVER"
	f=$(modinfo -F filename sroce) || fail "modinfo finds no sroce after make install"
	[[ $f == /lib/modules/$KVER/updates/sroce.ko ]] || fail "installed at $f, not in updates/"
	ensure_link
	mod_loaded || fail "rdma link add did not load sroce"
	[[ $(loaded_srcversion) == "$(srcversion_of "$REPO/build/modules/$KVER/sroce.ko")" ]] ||
		fail "the loaded module is not the one make install put there"
	[[ $(cat /sys/module/sroce/version) == "$VERSION" ]] || fail "loaded version $(cat /sys/module/sroce/version), not $VERSION"
	pingpong 4096 20
	"$RDMA" link delete "$DEV"
	"$MODPROBE" -r sroce
	make -s -C "$REPO" uninstall KVER="$KVER"
	! modinfo -F filename sroce 2>/dev/null || fail "make uninstall left $(modinfo -F filename sroce)"
}

t_deb_install() {
	local t0=$SECONDS f
	mod_loaded && "$MODPROBE" -r sroce
	dpkg -i "$DEB"
	info "dpkg -i (DKMS build for $KVER) took $((SECONDS - t0)) s"
	dkms status sroce
	dkms status -m sroce -v "$VERSION" -k "$KVER" | grep -q ': installed' || fail "DKMS did not install sroce/$VERSION for $KVER"
	f=$(modinfo -F filename sroce) || fail "modinfo finds no sroce after dpkg -i"
	[[ $f == /lib/modules/$KVER/updates/dkms/sroce.ko* ]] || fail "module at $f, not DKMS's updates/dkms"
	[[ $(modinfo -F vermagic sroce) == "$KVER "* ]] || fail "vermagic $(modinfo -F vermagic sroce) is not $KVER"
	modinfo sroce | grep -E '^(filename|version|description|srcversion|vermagic):'
}

t_deb_traffic() {
	local s0 r0 s1 r1
	! mod_loaded || fail "sroce already loaded before rdma link add"
	ensure_link
	mod_loaded || fail "rdma link add did not autoload sroce"
	[[ $(loaded_srcversion) == "$(srcversion_of sroce)" ]] || fail "the loaded module is not DKMS's"
	[[ $(cat /sys/module/sroce/version) == "$VERSION" ]] || fail "loaded version $(cat /sys/module/sroce/version), not $VERSION"
	# the same sources as make modules: the same checksum
	[[ $(loaded_srcversion) == "$(srcversion_of "$REPO/build/modules/$KVER/sroce.ko")" ]] ||
		fail "DKMS built other sources than the tree's"
	s0=$(counter sent_pkts) r0=$(counter rcvd_pkts)
	pingpong 4096 50
	s1=$(counter sent_pkts) r1=$(counter rcvd_pkts)
	info "sent_pkts +$((s1 - s0)), rcvd_pkts +$((r1 - r0))"
	((s1 - s0 >= 100 && r1 - r0 >= 100)) || fail "counters did not cover 2 x 50 messages"
}

t_deb_remove() {
	"$RDMA" link delete "$DEV" 2>/dev/null || true
	"$MODPROBE" -r sroce
	apt-get remove -y sroce-dkms
	[[ $(dpkg-query -W -f='${db:Status-Abbrev}' sroce-dkms 2>/dev/null) != ii* ]] || fail "sroce-dkms still installed"
	! modinfo -F filename sroce 2>/dev/null || fail "module left behind: $(modinfo -F filename sroce)"
	[[ -z $(dkms status sroce) ]] || fail "DKMS still lists sroce: $(dkms status sroce)"
	[[ ! -e /usr/src/sroce-$VERSION ]] || fail "/usr/src/sroce-$VERSION left behind"
	"$RDMA" link add "$DEV" type "$LTYPE" netdev "$NETDEV" 2>/dev/null && fail "rdma link add still works with the package removed"
	true
}

# ---------------------------------------------------------------------------
SUITE_PREFIX=${SUITE_PREFIX:-}
suite_begin "pkg(sroce $VERSION)"
run_test setup 60 pkg_setup
if grep -q "^FAIL ${SUITE_PREFIX}setup" "$RESULTS_TXT"; then
	suite_end
	exit 1
fi
run_test make_install 600 t_make_install
run_test deb_install 2400 t_deb_install
run_test deb_traffic 300 t_deb_traffic
run_test deb_remove 600 t_deb_remove
suite_end
