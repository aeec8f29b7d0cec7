#!/bin/busybox sh
# /init of the test guests (busybox, PID 1). Loads the modules, makes a 54-line gpio-sim chip
# labelled like a Pi 4's (/dev/gpiochip0), mounts the root share (9p tag hostroot: the host's /
# for the amd64 guest, the arm64 userspace for the arm64 one) read-only with a tmpfs overlay,
# chroots into it and runs guest_server.py there, or the shell script edge_script; powers off
# when that exits. The kernel passes edge_python, edge_server, edge_project and (arm64)
# edge_script from its command line as variables; with edge_script, the 9p share "project" (the
# checkout) is mounted read-only at edge_project.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
    echo "guest-init: $*" > /dev/console
    poweroff -f
}

while read -r module; do
    insmod "/lib/modules/$module.ko" || fail "insmod $module"
done < /modules.order

mount -t configfs configfs /sys/kernel/config || fail "mount configfs"
# arm64's virt machine has its own GPIO controller (a PL061), which would take gpiochip0: on a
# Pi 4 the header is gpiochip0, so let it go first
for device in /sys/bus/amba/drivers/pl061_gpio/*.pl061; do
    [ -e "$device" ] && { echo "${device##*/}" > /sys/bus/amba/drivers/pl061_gpio/unbind \
        || fail "unbind $device"; }
done
chip=/sys/kernel/config/gpio-sim/edge
mkdir -p "$chip/gpio-bank0" && echo 54 > "$chip/gpio-bank0/num_lines" \
    && echo pinctrl-bcm2711 > "$chip/gpio-bank0/label" && echo 1 > "$chip/live" \
    || fail "gpio-sim chip"

mkdir -p /host /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot /host \
    || fail "mount the host's / (9p hostroot)"
mount -t tmpfs -o mode=0755 rw /rw && mkdir /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work /newroot \
    || fail "overlay over the host's /"
mkdir -p /newroot/mailbox /newroot/dev /newroot/proc /newroot/sys
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 mailbox /newroot/mailbox \
    || fail "mount the mailbox (9p mailbox)"
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t configfs configfs /newroot/sys/kernel/config
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 shm /newroot/dev/shm
mount -t tmpfs -o mode=1777 tmp /newroot/tmp
mount -t tmpfs -o mode=0755 run /newroot/run
if [ -n "$edge_script" ]; then  # the checkout, where the root's venv has it installed
    mkdir -p "/newroot$edge_project" && mount -t 9p \
        -o trans=virtio,version=9p2000.L,ro,cache=loose project "/newroot$edge_project" \
        || fail "mount the checkout (9p project) at $edge_project"
fi
# a checkout under /tmp or /run (a CI clone) would be hidden by those tmpfs: show it again
[ -z "$edge_script" ] && for dir in "$edge_project" "${edge_python%/*}" "${edge_server%/*}"; do
    case "$dir" in
        /tmp/*|/run/*)
            if [ ! -e "/newroot$dir" ]; then
                mkdir -p "/newroot$dir" && mount --bind "/host$dir" "/newroot$dir" \
                    || fail "bind $dir into the guest"
            fi ;;
    esac
done

# gpiozero finds the board by the Revision line of /proc/cpuinfo: a Pi 4B's
{ cat /proc/cpuinfo; printf 'Hardware\t: BCM2835\nRevision\t: c03114\n'
  printf 'Serial\t\t: 10000000edge0001\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n'; } \
    > /newroot/run/cpuinfo
mount --bind /newroot/run/cpuinfo /newroot/proc/cpuinfo || fail "bind cpuinfo"
cp -a /lib/modules /newroot/run/modules  # for modules loaded later, with parameters

read -r uptime idle < /proc/uptime
echo "guest-init: chroot at uptime=$uptime" > /newroot/mailbox/init.log
if [ -n "$edge_script" ]; then
    chroot /newroot /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh "$edge_script" /mailbox > /newroot/mailbox/script.log 2>&1
    echo "guest-init: $edge_script exited ($?)" > /dev/console
else
    chroot /newroot /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        "$edge_python" -S "$edge_server" /mailbox > /newroot/mailbox/server.log 2>&1
    echo "guest-init: server exited ($?)" > /dev/console
fi
umount /newroot/mailbox
poweroff -f
