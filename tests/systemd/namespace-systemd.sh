# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034  # NSD_RUNDIR, NSD_UNITS, NSD_LOG: for the sourcing tests
# Boots the host's systemd as PID 1 of a private PID + mount + UTS + cgroup namespace,
# starts only a test target there, and runs commands in it from the host. Sourced by the
# tests in this directory (unit-under-systemd, package-lifecycle); needs root.
#
# Safety. The namespace shares the host's disk, so before systemd starts, the namespace
# gets fresh tmpfs on /run, /tmp, /var/tmp, /dev and /var/log/journal; /proc/sys and /sys
# are read-only; all mounts are private. Only vfready-test.target is started
# (DefaultDependencies=no): sysinit.target, basic.target, udev, tmpfiles and the other units
# that would touch the host are masked in the namespace's own /run. Nothing is installed
# in the host's /etc or /lib. NSD_OVERLAY=1 also makes the root file system an overlay
# (the host's / below, a tmpfs above), so that dpkg inside changes nothing on the host.
# nsd_cleanup (run it from an EXIT trap) powers the namespace off, kills what is left of
# its cgroup, and checks that a canary file in the host's /tmp survived.
#
# Use:
#   . namespace-systemd.sh
#   nsd_require || exit 77            # not root, no systemd, no cgroup2: skip
#   nsd_init NAME                     # NSD_WORK (host /tmp dir, same path inside), NSD_UNITS
#   trap nsd_cleanup EXIT
#   ... write units to $NSD_UNITS, add them to the target with nsd_target_wants ...
#   nsd_boot                          # returns when the initial transaction is done
#   nsd_run systemctl is-active foo.service
#   nsd_cleanup
#
# Inside the namespace $NSD_WORK is at the same path, and also at $NSD_RUNDIR
# (/run/NAME): services with PrivateTmp=yes do not see the namespace's /tmp.

NSD_TIMEOUT=${NSD_TIMEOUT:-15}   # bound of each command run inside (nsd_run)
NSD_PID1='' NSD_LAUNCHER='' NSD_CG='' NSD_WORK='' NSD_STAGE='' NSD_CANARY='' NSD_NAME='' NSD_RUNDIR=''
_NSD_WANT_UNIT='' _NSD_WANT_STATES=
NSD_OVERLAY=${NSD_OVERLAY:-0}
NSD_CATALOG_DIR=${NSD_CATALOG_DIR:-}   # extra *.catalog files for journalctl -x (see nsd_boot)

nsd_log() { echo "nsd: $*" >&2; }

# nsd_require: 0 when this machine can run the tests (root, systemd, cgroup2, tools).
nsd_require() {
  local t
  [ "$(id -u)" = 0 ] || { nsd_log "not root"; return 1; }
  [ -x /lib/systemd/systemd ] || { nsd_log "no /lib/systemd/systemd"; return 1; }
  for t in unshare nsenter python3 dbus-daemon systemctl journalctl; do
    command -v "$t" >/dev/null || { nsd_log "no $t"; return 1; }
  done
  [ -n "$(nsd_cgroup2_root)" ] || { nsd_log "no cgroup2 hierarchy"; return 1; }
}

# The host's cgroup2 mount: /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid).
nsd_cgroup2_root() {
  if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then echo /sys/fs/cgroup
  elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
    echo /sys/fs/cgroup/unified
  fi
}

# nsd_wait TIMEOUT_S DESCRIPTION CMD...: runs CMD every 0.1 s until it succeeds; 1 on timeout.
nsd_wait() {
  local limit=$1 what=$2 end
  shift 2
  end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then
      nsd_log "timeout (${limit}s) waiting for: $what"
      return 1
    fi
    sleep 0.1
  done
}

# nsd_run CMD...: runs CMD in the namespace (its mounts, root and PIDs), bounded.
nsd_run() { timeout "$NSD_TIMEOUT" nsenter -t "$NSD_PID1" -m -p -r -w -- "$@"; }

# nsd_state UNIT: its ActiveState (active, failed, ...).
nsd_state() { nsd_run systemctl show -P ActiveState "$1" 2>/dev/null; }

# nsd_wait_state TIMEOUT UNIT STATE...: waits until UNIT is in one of the STATEs.
nsd_wait_state() {
  local limit=$1
  _NSD_WANT_UNIT=$2
  shift 2
  _NSD_WANT_STATES=" $* "
  nsd_wait "$limit" "$_NSD_WANT_UNIT to be one of:$_NSD_WANT_STATES" _nsd_in_state
}
_nsd_in_state() {
  local s
  s=$(nsd_state "$_NSD_WANT_UNIT")
  [[ -n $s && $_NSD_WANT_STATES == *" $s "* ]]
}

# nsd_init NAME: the work directory, the canary and the units every boot needs.
nsd_init() {
  NSD_NAME=$1
  NSD_WORK=$(mktemp -d "/tmp/$NSD_NAME.XXXXXX")
  # Mount points for the namespace's new /run, /dev and /tmp: not under NSD_WORK, which is
  # bound into the new /tmp with all its mounts (the fake host's /sys among them).
  NSD_STAGE=$(mktemp -d "/tmp/$NSD_NAME-stage.XXXXXX")
  # Readable by dbus-daemon once it runs as messagebus (it re-reads its config on reload).
  chmod 0755 "$NSD_WORK"
  NSD_RUNDIR=/run/$(basename "$NSD_WORK")
  NSD_CANARY=$NSD_WORK.canary   # in the host's /tmp, outside everything we remove
  echo "canary $(date)" >"$NSD_CANARY"
  NSD_UNITS=$NSD_WORK/nsd/units
  NSD_LOG=$NSD_WORK/nsd/console.log
  mkdir -p "$NSD_UNITS" "$NSD_WORK/nsd/conf/system.conf.d" "$NSD_WORK/nsd/conf/journald.conf.d"
  : >"$NSD_LOG"
  _nsd_write_helpers
  _nsd_write_units
}

# nsd_target_wants UNIT...: vfready-test.target pulls these in.
nsd_target_wants() { echo "Wants=$*" >>"$NSD_UNITS/vfready-test.target"; }

_nsd_write_helpers() {
  # systemd as PID 1 logs to /dev/console only if it is a tty (open_terminal() refuses a
  # plain file), so the namespace gets a pty whose output this copies into NSD_LOG.
  cat >"$NSD_WORK/nsd/ptylog.py" <<'PY'
import os, pty, sys
log = open(sys.argv[1], "ab", buffering=0)
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:      # EIO: every holder of the slave side has gone
        break
    if not data:
        break
    log.write(data)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
PY
  # Runs as PID 1 of the new PID namespace, in the new mount namespace; execs systemd.
  # Its settings come in the environment (NSD_*).
  cat >"$NSD_WORK/nsd/inner.sh" <<'INNER'
#!/bin/bash
set -euo pipefail
S=$NSD_STAGE
mount -n --make-rprivate /
# R: the root systemd will run in. NSD_OVERLAY=1: an overlay of the host's / (lower,
# read-only) and a tmpfs (upper) that is not below any directory of the lower tree's file
# system; the kernel's own file systems are bound in, then fresh ones mounted over them.
R=
if [ "$NSD_OVERLAY" = 1 ]; then
  mount -n -t tmpfs -o mode=0755 ovl "$S/ovl"
  mkdir "$S/ovl/upper" "$S/ovl/work" "$S/ovl/root"
  mount -n -t overlay -o "lowerdir=/,upperdir=$S/ovl/upper,workdir=$S/ovl/work" overlay "$S/ovl/root"
  R=$S/ovl/root
  mount -n --rbind /proc "$R/proc"
  mount -n --rbind /sys "$R/sys"
fi
# New /run: tmpfs with the host's network namespaces (fake hosts), the units and config
# of the test (/run/systemd/system has a lower priority than the host's /etc/systemd/system,
# which holds only enablement links here), and the work directory for services.
mount -n -t tmpfs -o mode=0755,nosuid,nodev run "$S/run"
mkdir -p "$S/run/netns" "$S/run/systemd/system" "$S/run/lock"
[ -d /run/netns ] && mount -n --rbind /run/netns "$S/run/netns"
cp -a "$NSD_WORK/nsd/units/." "$S/run/systemd/system/"
cp -a "$NSD_WORK/nsd/conf/." "$S/run/systemd/"
mkdir "$S/run/$NSD_BASE"
mount -n --rbind "$NSD_WORK" "$S/run/$NSD_BASE"
# New /dev: tmpfs with the usual nodes bound from the host, a private devpts, and
# /dev/console bound to ptylog.py's pty (PID 1 writes to /dev/console).
D=$S/dev
mount -n -t tmpfs -o mode=0755,nosuid dev "$D"
for n in null zero full random urandom tty kmsg; do
  touch "$D/$n"
  mount -n --bind "/dev/$n" "$D/$n"
done
touch "$D/console"
mount -n --bind "$(readlink /proc/self/fd/0)" "$D/console"
mkdir "$D/pts" "$D/shm"
mount -n -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$D/pts"
ln -s pts/ptmx "$D/ptmx"
mount -n -t tmpfs -o mode=1777,nosuid,nodev shm "$D/shm"
ln -s /proc/self/fd "$D/fd"
ln -s /proc/self/fd/0 "$D/stdin"
ln -s /proc/self/fd/1 "$D/stdout"
ln -s /proc/self/fd/2 "$D/stderr"
# New /tmp: tmpfs with the work directory at its own path.
mount -n -t tmpfs -o mode=1777,nosuid,nodev tmp "$S/tmp"
mkdir -p "$S/tmp/$NSD_BASE"
mount -n --rbind "$NSD_WORK" "$S/tmp/$NSD_BASE"
# Journal catalog: the stock catalogs plus the test's, compiled into a tmpfs database.
if [ -n "$NSD_CATALOG_DIR" ]; then
  mount -n --bind "$NSD_CATALOG_DIR" "$R/usr/lib/systemd/catalog"
  mount -n -t tmpfs -o mode=0755 catalog "$R/var/lib/systemd/catalog"
  SYSTEMD_LOG_LEVEL=warning chroot "${R:-/}" journalctl --update-catalog
fi
mount -n --move "$S/run" "$R/run"
mount -n --move "$D" "$R/dev"
mount -n -t tmpfs -o mode=1777,nosuid,nodev vartmp "$R/var/tmp"
[ -d "$R/var/log/journal" ] && mount -n -t tmpfs -o mode=2755 journal "$R/var/log/journal"
# cgroup2 only, rooted at our cgroup namespace (systemd then runs in unified mode).
umount -n -R "$R/sys/fs/cgroup" 2>/dev/null || umount -n -l "$R/sys/fs/cgroup"
mount -n -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$R/sys/fs/cgroup"
# Kernel tunables and the host's sysfs read-only (bind remounts: per mount, never the
# shared superblock).
mount -n --bind "$R/proc/sys" "$R/proc/sys"
mount -n -o remount,bind,ro "$R/proc/sys"
mount -n -o remount,bind,ro "$R/sys"
mount -n --move "$S/tmp" "$R/tmp"      # last: $S is under the host's /tmp
if [ -n "$R" ]; then
  # Enter the overlay: it becomes the namespace's root, the host's / is let go.
  cd "$R"
  mkdir -p .nsd-oldroot
  pivot_root . .nsd-oldroot
  cd /
  umount -n -l /.nsd-oldroot
  rmdir /.nsd-oldroot
fi
echo "inner: mounts ready, exec systemd" >/dev/console
exec env -i container=vfready-test PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
  /lib/systemd/systemd --system --unit=vfready-test.target \
  --log-target=console --log-level=info --show-status=no --log-color=no
INNER
  chmod +x "$NSD_WORK/nsd/inner.sh"
}

_nsd_write_units() {
  local U=$NSD_UNITS C=$NSD_WORK/nsd/conf u
  # The only target started: journald and D-Bus; tests add theirs (nsd_target_wants).
  cat >"$U/vfready-test.target" <<'EOF'
[Unit]
Description=vfready test target
DefaultDependencies=no
Wants=systemd-journald.socket systemd-journald.service dbus.socket
EOF
  # journald's socket first: services started beside it would otherwise log to nowhere.
  mkdir -p "$U/systemd-journald.socket.d"
  printf '[Unit]\nBefore=dbus.socket vfready.service kubelet.service\n' \
    >"$U/systemd-journald.socket.d/nsd.conf"
  # journald asks LimitNOFILE=524288, above this machine's hard limit (no CAP_SYS_RESOURCE
  # here: 205/LIMITS); without netlink it cannot switch the host's kernel audit on.
  mkdir -p "$U/systemd-journald.service.d"
  cat >"$U/systemd-journald.service.d/nsd.conf" <<EOF
[Service]
LimitNOFILE=$(ulimit -Hn)
RestrictAddressFamilies=
RestrictAddressFamilies=AF_UNIX
EOF
  # D-Bus: the Debian units pull sysinit.target; these copies do not. Its policy: the stock
  # one plus what tests put in $NSD_WORK/nsd/dbus.d (vfreadyd's own, for one).
  cat >"$U/dbus.socket" <<'EOF'
[Unit]
Description=D-Bus System Message Bus Socket (test copy)
DefaultDependencies=no
Before=vfready.service kubelet.service
[Socket]
ListenStream=/run/dbus/system_bus_socket
EOF
  mkdir -p "$NSD_WORK/nsd/dbus.d"
  cat >"$NSD_WORK/nsd/dbus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/system.conf</include>
  <includedir>$NSD_WORK/nsd/dbus.d</includedir>
</busconfig>
EOF
  cat >"$U/dbus.service" <<EOF
[Unit]
Description=D-Bus System Message Bus (test copy)
DefaultDependencies=no
Requires=dbus.socket
After=dbus.socket
[Service]
Type=notify
NotifyAccess=main
ExecStart=/usr/bin/dbus-daemon --config-file=$NSD_WORK/nsd/dbus.conf --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only
EOF
  # Masked in the namespace: anything pulling them fails instead of emptying the host's
  # /tmp, replaying its devices or writing its sysctls.
  for u in sysinit.target basic.target local-fs.target sockets.target timers.target \
    systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service \
    systemd-tmpfiles-clean.service systemd-tmpfiles-clean.timer systemd-udevd.service \
    systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-udev-trigger.service \
    systemd-udev-settle.service systemd-journald-audit.socket systemd-sysctl.service \
    systemd-modules-load.service systemd-random-seed.service systemd-journal-flush.service \
    getty.target console-getty.service systemd-logind.service systemd-timesyncd.service; do
    ln -sf /dev/null "$U/$u"
  done
  # Service rlimits must stay within our hard limits (no CAP_SYS_RESOURCE).
  cat >"$C/system.conf.d/nsd.conf" <<EOF
[Manager]
DefaultLimitNOFILE=1024:$(ulimit -Hn)
DefaultLimitMEMLOCK=$(($(ulimit -Hl) * 1024))
DefaultTimeoutStartSec=30s
DefaultTimeoutStopSec=10s
EOF
  cat >"$C/journald.conf.d/nsd.conf" <<'EOF'
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
EOF
}

# nsd_boot: starts the namespace, returns 0 once its initial transaction is done.
nsd_boot() {
  local cg2 t0=$SECONDS
  cg2=$(nsd_cgroup2_root)
  NSD_CG=$cg2/$(basename "$NSD_WORK")
  mkdir "$NSD_CG"
  if [ -n "$NSD_CATALOG_DIR" ]; then
    # Where the namespace's journalctl finds catalogs: the stock ones and the test's.
    mkdir -p "$NSD_WORK/nsd/catalog"
    cp /usr/lib/systemd/catalog/*.catalog "$NSD_CATALOG_DIR"/*.catalog "$NSD_WORK/nsd/catalog/"
    NSD_CATALOG_DIR=$NSD_WORK/nsd/catalog
  fi
  [ "$NSD_OVERLAY" = 1 ] && mkdir -p "$NSD_STAGE/ovl"
  mkdir -p "$NSD_STAGE/run" "$NSD_STAGE/dev" "$NSD_STAGE/tmp"
  # The launcher moves itself into our cgroup, then unshares: the cgroup namespace is
  # rooted there, and cgroup.kill of it ends everything the namespace started. PID 1's
  # console (the pty) and the launcher's own errors both go to NSD_LOG.
  # shellcheck disable=SC2094
  (
    echo "$BASHPID" >"$NSD_CG/cgroup.procs"
    exec env NSD_WORK="$NSD_WORK" NSD_STAGE="$NSD_STAGE" NSD_BASE="$(basename "$NSD_WORK")" \
      NSD_OVERLAY="$NSD_OVERLAY" NSD_CATALOG_DIR="$NSD_CATALOG_DIR" \
      python3 "$NSD_WORK/nsd/ptylog.py" "$NSD_LOG" \
      unshare --pid --fork --mount --uts --cgroup --mount-proc --propagation private \
      -- "$NSD_WORK/nsd/inner.sh"
  ) >>"$NSD_LOG" 2>&1 </dev/null &
  NSD_LAUNCHER=$!   # ptylog.py, whose child is unshare, whose child is the namespace's PID 1
  nsd_wait 10 "the namespace's PID 1" _nsd_find_pid1 || return 1
  nsd_wait 20 "systemd as PID 1" _nsd_is_systemd || return 1
  nsd_wait 20 "systemd's private socket" test -S "/proc/$NSD_PID1/root/run/systemd/private" ||
    return 1
  # Booted: the initial transaction ended (is-system-running leaves initializing/starting).
  nsd_wait 60 "the boot to finish" _nsd_booted || return 1
  nsd_log "booted in $((SECONDS - t0)) s: host PID of PID 1 $NSD_PID1, console $NSD_LOG"
}

_nsd_children() { cat "/proc/$1/task/$1/children" 2>/dev/null; }
# PID 1 is unshare's child whose NSpid ends in 1 (unshare may have short-lived helpers).
_nsd_find_pid1() {
  local u c
  for u in $(_nsd_children "$NSD_LAUNCHER"); do
    for c in $(_nsd_children "$u"); do
      if awk '/^NSpid:/ { exit !($NF == 1 && NF == 3) }' "/proc/$c/status" 2>/dev/null; then
        NSD_PID1=$c
        return 0
      fi
    done
  done
  return 1
}
_nsd_is_systemd() { [ "$(cat "/proc/$NSD_PID1/comm" 2>/dev/null)" = systemd ]; }
_nsd_booted() {
  local s
  s=$(nsd_run systemctl is-system-running 2>/dev/null) || true
  [ "$s" = running ] || [ "$s" = degraded ]
}

# nsd_stop: poweroff (SIGRTMIN+4), bounded; then cgroup.kill of whatever is left, and
# the cgroups systemd made go.
nsd_stop() {
  if [ -n "$NSD_LAUNCHER" ]; then
    if [ -n "$NSD_PID1" ] && kill -s SIGRTMIN+4 "$NSD_PID1" 2>/dev/null; then
      nsd_wait 30 "the namespace to power off" _nsd_launcher_gone ||
        nsd_log "poweroff did not end; killing the namespace"
    fi
  fi
  if [ -n "$NSD_CG" ] && [ -e "$NSD_CG/cgroup.kill" ]; then
    echo 1 >"$NSD_CG/cgroup.kill" 2>/dev/null || true
  fi
  if [ -n "$NSD_LAUNCHER" ]; then
    kill -KILL "$NSD_LAUNCHER" 2>/dev/null || true
    wait "$NSD_LAUNCHER" 2>/dev/null || true
  fi
  NSD_LAUNCHER='' NSD_PID1=''
  if [ -n "$NSD_CG" ] && [ -d "$NSD_CG" ]; then
    nsd_wait 10 "$NSD_CG to be removed" _nsd_rmdir_cg || nsd_log "warning: $NSD_CG left behind"
  fi
}
_nsd_launcher_gone() { ! kill -0 "$NSD_LAUNCHER" 2>/dev/null; }
_nsd_rmdir_cg() {
  find "$NSD_CG" -depth -type d -exec rmdir {} + 2>/dev/null
  [ ! -d "$NSD_CG" ]
}

# nsd_cleanup: for the EXIT trap. Stops the namespace, removes the work directories,
# and returns 1 (with a FAIL line) if the host's /tmp lost the canary.
nsd_cleanup() {
  local rc=0
  set +e
  nsd_stop
  if [ -n "${NSD_KEEP:-}" ]; then nsd_log "kept $NSD_WORK"
  else rm -rf --one-file-system "$NSD_WORK" "$NSD_STAGE"; fi
  if [ -n "$NSD_CANARY" ]; then
    if [ ! -e "$NSD_CANARY" ]; then
      echo "FAIL host-tmp: the canary $NSD_CANARY in the host's /tmp is gone"
      rc=1
    fi
    rm -f "$NSD_CANARY"
  fi
  return $rc
}
