#!/bin/sh
# The aarch64 guest's whole job, run by /init as root in the chroot (the arm64 Pi OS userspace),
# with the mailbox as $1: one `edge-cli run` as the user pi (in the gpio group, as on Pi OS) with
# simulate = false, i.e. gpiozero's lgpio factory on /dev/gpiochip0, gpio-sim's chip labelled
# like a Pi 4's. Python is slow under full-system TCG, so nothing else here is Python: the levels
# are read from gpio-sim's sysfs, the input is moved through its pull, and the kernel's gpio
# trace events record what the agent drove. Results go to $1/results as key=value lines (uptimes
# in seconds), the exit code to $1/rc; the host asserts on them.
# scenario.env gives EDGE_CLI, EDGE_HOME, LED, RELAY, BUTTON (BCM offsets) and WAIT (seconds
# per step).
box=$1
. "$box/scenario.env"
results=$box/results
: > "$results"
say() { echo "$1=$2" >> "$results"; }
now() { read -r up idle < /proc/uptime; echo "$up"; }
finish() { say failed "$1"; echo 1 > "$box/rc"; exit 1; }

sim=$(echo /sys/devices/platform/gpio-sim.*/gpiochip*)
[ -d "$sim" ] || finish "no gpio-sim chip ($sim)"
say chip "${sim##*/}"
say machine "$(uname -m)"
level() { read -r value < "$sim/sim_gpio$1/value"; echo "$value"; }
pull() { echo "$2" > "$sim/sim_gpio$1/pull" || finish "pull $1 $2"; }
# true until WAIT seconds have passed since `start_step` (every fork is slow under TCG: builtins)
start_step() { read -r up idle < /proc/uptime; deadline=$((${up%.*} + WAIT)); }
in_time() { read -r up idle < /proc/uptime; [ "${up%.*}" -lt "$deadline" ]; }
until_level() {  # a line reads $2 within the step
    while read -r value < "$sim/sim_gpio$1/value" && [ "$value" != "$2" ]; do
        in_time || return 1
        sleep 0.05
    done
}
# the chip's first global line number, which the trace events name lines by
base=
for chip in /sys/class/gpio/gpiochip*; do
    [ "$(cat "$chip/label")" = pinctrl-bcm2711 ] && base=$(cat "$chip/base")
done
[ -n "$base" ] || finish "no /sys/class/gpio entry for the chip (CONFIG_GPIO_SYSFS): no base"
say base "$base"

# the pulls are the opposite of the safe levels (LED off = low, active-low relay off = high):
# once the agent releases a line, gpio-sim returns it to its pull, so only the agent drives the
# safe level; the button is released (pulled up)
pull "$LED" pull-up
pull "$RELAY" pull-down
pull "$BUTTON" pull-up
chgrp gpio /dev/gpiochip0 && chmod 0660 /dev/gpiochip0 || finish "gpio group on the chip"
home=$EDGE_HOME  # the config's state_dir is $home/state
mkdir -p "$home/lgwd" && cp "$box/config.toml" "$home/" && chown -R pi:pi "$home" \
    || finish "the agent's home"
trace=/sys/kernel/tracing
mount -t tracefs tracefs "$trace" && echo 1 > "$trace/events/gpio/enable" \
    || finish "gpio trace events"

say agent_started "$(now)"
setpriv --reuid=pi --regid=pi --init-groups env -i PATH=/usr/bin:/bin HOME="$home" \
    LANG=C.UTF-8 EDGE_CONFIG="$home/config.toml" EDGE_MEMORY__EMBEDDER=none LG_WD="$home/lgwd" \
    "$EDGE_CLI" run < /dev/null > "$box/agent.out" 2> "$box/agent.err" &
agent=$!
start_step
# ready: boards, rules and the control socket are up (the socket alone comes before the rules)
until grep -q "event=ready " "$box/agent.err"; do
    kill -0 "$agent" 2> /dev/null || { wait "$agent"; finish "the agent exited ($?) at start"; }
    in_time || finish "the agent was not ready after $WAIT s"
    sleep 0.2
done
say agent_ready "$(now)"
say led_at_start "$(level "$LED")"
say relay_at_start "$(level "$RELAY")"

pull "$BUTTON" pull-down  # pressed: the rule switches the LED and the relay on
say pressed "$(now)"
start_step
until_level "$LED" 1 && until_level "$RELAY" 0
say rule_acted "$(now)"
say led_after_press "$(level "$LED")"
say relay_after_press "$(level "$RELAY")"

echo > "$trace/trace"  # from here on: what the agent drives as it stops
kill -TERM "$agent"
say sigterm "$(now)"
wait "$agent"  # the host's timeout bounds this one
say agent_rc "$?"
say agent_stopped "$(now)"
echo 0 > "$trace/tracing_on"
cp "$trace/trace" "$box/trace.txt"
say led_after_exit "$(level "$LED")"
say relay_after_exit "$(level "$RELAY")"
echo 0 > "$box/rc"
