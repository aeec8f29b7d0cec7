#!/bin/sh
# Install, upgrade or remove edge-agent as a system service (Raspberry Pi OS / Debian).
#
#   sudo deploy/install.sh                  install (idempotent: run it again to repair)
#   sudo deploy/install.sh --upgrade        a backup first (the state directory's backups/),
#                                           then a new venv; rolls back to the previous one if
#                                           the health check fails
#   sudo deploy/install.sh --uninstall      remove all but config (/etc/edge-agent) and state
#   sudo deploy/install.sh --uninstall --purge   remove those and the edge user too
#
# Options:
#   --root DIR        act on a scratch root (tests, image builds): no systemctl, no udevadm
#   --source PATH     what pip installs: a checkout of edge-agent (a directory), a source
#                     tarball of one (.tar.gz: `git archive`, a release download) or a wheel
#                     built from one (default: the checkout this script is in). Never a bare
#                     package name: edge-agent on the package index is somebody else's project.
#   --pip-args ARGS   extra pip arguments (e.g. "--no-index --find-links /srv/wheels")
#   --python PY       interpreter for the venv (default python3, 3.11 or newer)
#   --operator USER   add USER to the edge group so `edge-cli` reaches the control socket
#                     (default: $SUDO_USER)
#   --no-start        install but do not enable or start the service
#   --no-backup       upgrade without taking a backup first
#
# Layout: /opt/edge-agent/releases/<stamp> are venvs; /opt/edge-agent/venv and
# /opt/edge-agent/previous are symlinks to the current and previous ones, so switching and
# rolling back are one rename each. The config is written from the example once, never
# overwritten. Exit status: 0 ok, 1 failed (after any rollback), 2 bad usage.
set -eu

ROOT=""
MODE=install
PURGE=no
SOURCE=""
PIP_ARGS=""
PYTHON=python3
OPERATOR="${SUDO_USER:-}"
START=yes
BACKUP=yes
SERVICE_USER=edge
GROUPS_WANTED="gpio dialout i2c spi video"
HERE=$(cd "$(dirname "$0")" && pwd)

say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 1; }
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0; }

while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT=${2:?--root needs a directory}; shift ;;
        --root=*) ROOT=${1#*=} ;;
        --upgrade) MODE=upgrade ;;
        --uninstall) MODE=uninstall ;;
        --purge) PURGE=yes ;;
        --source) SOURCE=${2:?--source needs a path}; shift ;;
        --source=*) SOURCE=${1#*=} ;;
        --pip-args) PIP_ARGS=${2?}; shift ;;
        --pip-args=*) PIP_ARGS=${1#*=} ;;
        --python) PYTHON=${2:?--python needs an interpreter}; shift ;;
        --python=*) PYTHON=${1#*=} ;;
        --operator) OPERATOR=${2?}; shift ;;
        --operator=*) OPERATOR=${1#*=} ;;
        --no-start) START=no ;;
        --no-backup) BACKUP=no ;;
        -h|--help) usage ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ "$PURGE" = yes ] && [ "$MODE" != uninstall ]; then
    echo "install.sh: --purge goes with --uninstall" >&2; exit 2
fi
if [ -n "$SOURCE" ]; then
    case "$SOURCE" in
        *.whl|*.tar.gz|*.tgz)
            [ -f "$SOURCE" ] || { echo "install.sh: --source $SOURCE: no such file" >&2; exit 2; } ;;
        *) [ -f "$SOURCE/pyproject.toml" ] || {
               echo "install.sh: --source must be a checkout of edge-agent (a directory with pyproject.toml), a source tarball (.tar.gz) or a .whl file, not '$SOURCE' (a bare name would install whatever the package index has under it)" >&2; exit 2; }
           grep -q '^name = "edge-agent-pi"' "$SOURCE/pyproject.toml" || {
               echo "install.sh: --source $SOURCE is not a checkout of edge-agent (its pyproject.toml does not name edge-agent-pi)" >&2; exit 2; } ;;
    esac
    # an absolute path: pip reads a bare relative name ("edge-agent-0.3") as a package to fetch
    SOURCE="$(cd "$(dirname "$SOURCE")" && pwd -P)/$(basename "$SOURCE")"
fi
if [ -n "$ROOT" ]; then
    mkdir -p "$ROOT"
    ROOT=$(cd "$ROOT" && pwd -P)
    [ "$ROOT" != / ] || ROOT=""
fi
if [ "$(id -u)" -ne 0 ] && [ -z "$ROOT" ]; then
    die "run as root (sudo $0 ...), or pass --root DIR for a scratch install"
fi

OPT="$ROOT/opt/edge-agent"
VENV="$OPT/venv"
PREVIOUS="$OPT/previous"
CONF_DIR="$ROOT/etc/edge-agent"
CONFIG="$CONF_DIR/config.toml"
CONFIG_WRITTEN=""
ENV_FILE="$CONF_DIR/env"
STATE_DIR="$ROOT/var/lib/edge-agent"
CACHE_DIR="$ROOT/var/cache/edge-agent"  # systemd's CacheDirectory: code kept between starts
UNIT="$ROOT/etc/systemd/system/edge-agent.service"
UDEV_RULES="$ROOT/etc/udev/rules.d/99-edge-agent.rules"
BASH_COMPLETION="$ROOT/usr/share/bash-completion/completions/edge-cli"
ZSH_COMPLETION="$ROOT/usr/share/zsh/vendor-completions/_edge-cli"
BIN_LINK="$ROOT/usr/local/bin/edge-cli"
SHARE="$OPT/share"

live() { [ -z "$ROOT" ]; }
systemd_running() { live && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }
is_root() { [ "$(id -u)" -eq 0 ]; }
prefix_opt() { [ -n "$ROOT" ] && printf -- '--prefix %s' "$ROOT"; }

# ---- users and groups ----------------------------------------------------------------------

ensure_account_files() {
    # A scratch root gets the minimal files that useradd --prefix edits.
    [ -n "$ROOT" ] || return 0
    mkdir -p "$ROOT/etc"
    [ -f "$ROOT/etc/passwd" ] || echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOT/etc/passwd"
    [ -f "$ROOT/etc/group" ] || echo 'root:x:0:' >"$ROOT/etc/group"
    [ -f "$ROOT/etc/shadow" ] || { echo 'root:*:19000:0:99999:7:::' >"$ROOT/etc/shadow"; chmod 0640 "$ROOT/etc/shadow"; }
    [ -f "$ROOT/etc/gshadow" ] || { echo 'root:*::' >"$ROOT/etc/gshadow"; chmod 0640 "$ROOT/etc/gshadow"; }
}

has_group() { cut -d: -f1 "$ROOT/etc/group" | grep -qx "$1"; }
has_user() { cut -d: -f1 "$ROOT/etc/passwd" | grep -qx "$1"; }
numeric_id() { awk -F: -v n="$2" '$1 == n { print $3 }' "$ROOT/etc/$1"; }

ensure_user() {
    ensure_account_files
    if ! is_root; then
        say "not root: skipping user and group creation in $ROOT"
        return 0
    fi
    for group in $GROUPS_WANTED; do
        # Raspberry Pi OS has them all; plain Debian lacks gpio, i2c and spi (the udev rules
        # below give gpiochip devices to gpio).
        has_group "$group" || { groupadd $(prefix_opt) --system "$group"; say "created group $group"; }
    done
    if ! has_user "$SERVICE_USER"; then
        useradd $(prefix_opt) --system --user-group --home-dir /var/lib/edge-agent \
            --no-create-home --shell /usr/sbin/nologin --comment "edge-agent service" "$SERVICE_USER"
        say "created user $SERVICE_USER"
    fi
    usermod $(prefix_opt) -a -G "$(echo $GROUPS_WANTED | tr ' ' ,)" "$SERVICE_USER"
    if [ -n "$OPERATOR" ] && [ "$OPERATOR" != root ]; then
        if has_user "$OPERATOR"; then
            usermod $(prefix_opt) -a -G "$SERVICE_USER" "$OPERATOR"
            say "added $OPERATOR to group $SERVICE_USER (log in again to use edge-cli with the service)"
        else
            say "operator $OPERATOR does not exist here; not added to group $SERVICE_USER"
        fi
    fi
}

own() {  # own OWNER:GROUP MODE PATH... (ownership only as root)
    spec=$1 mode=$2; shift 2
    if is_root && has_user "$SERVICE_USER"; then
        uid=0 gid=0
        case "$spec" in *:edge) gid=$(numeric_id group "$SERVICE_USER") ;; esac
        case "$spec" in edge:*) uid=$(numeric_id passwd "$SERVICE_USER") ;; esac
        chown "$uid:$gid" "$@"
    fi
    chmod "$mode" "$@"
}

# ---- the venv -------------------------------------------------------------------------------

default_source() {
    [ -f "$HERE/../pyproject.toml" ] || die "no checkout around $HERE: pass --source PATH (a checkout or a .whl file)"
    (cd "$HERE/.." && pwd)
}

# The Pi header's pin factory is lgpio. PyPI has self-contained wheels for 64-bit machines
# (pyproject.toml asks for them); 32-bit Pi OS has none, so there the venv sees the system's
# site packages and Raspberry Pi OS's python3-lgpio package provides it.
VENV_FLAGS=""
prepare_pin_factory() {
    case "${EDGE_INSTALL_MACHINE:-$(uname -m)}" in
        armv6l|armv7l|armhf)
            VENV_FLAGS="--system-site-packages"
            if "$PYTHON" -c 'import lgpio; lgpio.gpiochip_open' 2>/dev/null; then
                return 0
            fi
            if live && command -v apt-get >/dev/null 2>&1; then
                say "32-bit system: installing python3-lgpio (the pin factory) with apt" >&2
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-lgpio >&2 \
                    || die "apt-get install python3-lgpio failed; install it, then run this again"
            else
                say "32-bit system: install Raspberry Pi OS's python3-lgpio package (sudo apt install python3-lgpio) for the pin factory" >&2
            fi ;;
    esac
}

# Charts (matplotlib) and camera pictures (Pillow): PyPI has no armv7 wheels of them either, so
# on 32-bit Pi OS they are Debian's python3-matplotlib and python3-pil, which the venv sees with
# the system's site packages. The agent runs without them; a chart or a picture says what is missing.
prepare_pictures() {
    case "${EDGE_INSTALL_MACHINE:-$(uname -m)}" in
        armv6l|armv7l|armhf)
            if "$PYTHON" -c 'import matplotlib, PIL' 2>/dev/null; then
                return 0
            fi
            if live && command -v apt-get >/dev/null 2>&1; then
                say "32-bit system: installing python3-matplotlib and python3-pil (charts, pictures) with apt" >&2
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib python3-pil >&2 \
                    || say "apt-get install python3-matplotlib python3-pil failed: charts and pictures are unavailable until they are installed" >&2
            else
                say "32-bit system: install python3-matplotlib and python3-pil (sudo apt install python3-matplotlib python3-pil) for charts and pictures" >&2
            fi ;;
    esac
}

# The sandbox of stdio MCP servers ([[mcp.servers]] with a command): bubblewrap, in Debian and
# Raspberry Pi OS. Without it such a server does not start (unless its entry says sandbox = false).
prepare_sandbox() {
    command -v bwrap >/dev/null 2>&1 && return 0
    if live && command -v apt-get >/dev/null 2>&1; then
        say "installing bubblewrap (the sandbox of stdio MCP servers) with apt" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >&2 \
            || say "apt-get install bubblewrap failed: stdio MCP servers will not start until it is installed" >&2
    else
        say "install bubblewrap (sudo apt install bubblewrap) for the sandbox of stdio MCP servers" >&2
    fi
}

check_pin_factory() {  # check_pin_factory VENV: lgpio imports and is the real module
    "$1/bin/python" -c 'import lgpio; lgpio.gpiochip_open' 2>/dev/null
}

build_release() {  # prints the new release directory
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$PYTHON is older than 3.11; install python3.11 or pass --python"
    prepare_pin_factory
    prepare_pictures
    prepare_sandbox
    mkdir -p "$OPT/releases"
    chmod 0755 "$OPT" "$OPT/releases"
    release=$(mktemp -d "$OPT/releases/$(date +%Y%m%dT%H%M%S).XXXX")
    chmod 0755 "$release"
    say "creating venv $release" >&2
    # shellcheck disable=SC2086  # VENV_FLAGS is empty or one flag
    "$PYTHON" -m venv $VENV_FLAGS "$release" >&2 || { rm -rf "$release"; die "python3 -m venv failed; install python3-venv"; }
    # shellcheck disable=SC2086  # PIP_ARGS is a list of words
    if ! "$release/bin/pip" install --quiet --disable-pip-version-check $PIP_ARGS "${SOURCE:-$(default_source)}" >&2; then
        rm -rf "$release"
        die "pip install of ${SOURCE:-$(default_source)} failed (see above); nothing was changed"
    fi
    echo "$release"
}

switch_to() {  # switch_to LINK TARGET: atomically point LINK at TARGET
    ln -sfn "$2" "$1.tmp"
    mv -T "$1.tmp" "$1"
}

health_check() {
    "$VENV/bin/edge-cli" --version >/dev/null 2>&1 || { say "health: $VENV/bin/edge-cli does not start"; return 1; }
    "$VENV/bin/edge-cli" config check --config "$CONFIG" || { say "health: config check failed with the new venv"; return 1; }
    check_pin_factory "$VENV" || { say "health: the pin factory lgpio does not import in $VENV (32-bit Pi OS: sudo apt install python3-lgpio)"; return 1; }
    if systemd_running && [ "$START" = yes ] && systemctl is-enabled --quiet edge-agent 2>/dev/null; then
        systemctl restart edge-agent || { say "health: the service did not start"; return 1; }
        tries=0
        until "$VENV/bin/edge-cli" status --json 2>/dev/null | grep -q '"running": true'; do
            tries=$((tries + 1))
            [ $tries -lt 30 ] || { say "health: the service does not answer on its control socket"; return 1; }
            sleep 1
        done
    fi
    return 0
}

prune_releases() {  # keep only the current and previous releases
    keep_current=$(readlink -f "$VENV" 2>/dev/null || true)
    keep_previous=$(readlink -f "$PREVIOUS" 2>/dev/null || true)
    for dir in "$OPT"/releases/*; do
        [ -d "$dir" ] || continue
        [ "$dir" = "$keep_current" ] || [ "$dir" = "$keep_previous" ] || rm -rf "$dir"
    done
}

install_venv() {
    if [ -x "$VENV/bin/edge-cli" ] && [ "$MODE" = install ]; then
        say "venv present ($(readlink "$VENV")); use --upgrade to install a new version"
        return 0
    fi
    new=$(build_release)
    old=$(readlink "$VENV" 2>/dev/null || true)   # relative: releases/<stamp>
    switch_to "$VENV" "releases/${new##*/}"
    install_config  # a first install checks its health against the example config
    if health_check; then
        [ -z "$old" ] || switch_to "$PREVIOUS" "$old"
        prune_releases
        say "now running $("$VENV/bin/edge-cli" --version) from $new"
        say "pin factory: lgpio $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("lgpio"))' 2>/dev/null || echo '(system package)')"
        say "charts: matplotlib $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("matplotlib"))' 2>/dev/null || echo 'missing (32-bit Pi OS: sudo apt install python3-matplotlib)')"
        return 0
    fi
    if [ -n "$old" ] && [ -d "$OPT/$old" ]; then
        switch_to "$VENV" "$old"
        rm -rf "$new"
        if systemd_running && [ "$START" = yes ]; then systemctl restart edge-agent || true; fi
        die "the new version failed its health check; rolled back to $OPT/$old"
    fi
    rm -f "$VENV"
    rm -rf "$new"
    die "the new installation failed its health check; nothing is installed"
}

backup_before_upgrade() {  # the installed version backs up the config and state, as the service sees them
    [ "$MODE" = upgrade ] && [ "$BACKUP" = yes ] || return 0
    if ! "$VENV/bin/edge-cli" backup --help >/dev/null 2>&1; then
        say "the installed version has no 'edge-cli backup': upgrading without a backup"
        return 0
    fi
    backups="$STATE_DIR/backups"
    archive="$backups/pre-upgrade-$(date -u +%Y%m%d-%H%M%S).tar.gz"
    mkdir -p "$backups"
    STATE_DIRECTORY="$STATE_DIR" "$VENV/bin/edge-cli" --config "$CONFIG" backup create "$archive" \
        --env-file "$ENV_FILE" >/dev/null \
        || die "the backup before the upgrade failed (above); nothing was changed. Free some space, or upgrade with --no-backup"
    own edge:edge 0700 "$backups"
    own edge:edge 0600 "$archive"
    # the three newest pre-upgrade backups are kept
    ls -1t "$backups"/pre-upgrade-*.tar.gz 2>/dev/null | tail -n +4 | while read -r old; do rm -f "$old"; done
    say "backed up the config and state to $archive (edge-cli backup verify $archive)"
}

# ---- files ----------------------------------------------------------------------------------

install_file() {  # install_file SOURCE DEST MODE
    mkdir -p "$(dirname "$2")"
    cp "$1" "$2.tmp"
    chmod "$3" "$2.tmp"
    mv "$2.tmp" "$2"
}

install_config() {
    mkdir -p "$CONF_DIR"
    own root:edge 0770 "$CONF_DIR"
    if [ -e "$CONFIG" ]; then  # said once: a first install writes it, then comes here again
        [ -n "$CONFIG_WRITTEN" ] || say "keeping existing $CONFIG"
    else
        "$VENV/bin/edge-cli" config init - >"$CONFIG.tmp"
        own root:edge 0660 "$CONFIG.tmp"
        mv "$CONFIG.tmp" "$CONFIG"
        CONFIG_WRITTEN=1
        say "wrote $CONFIG from the example; edit it, then: edge-cli config check"
    fi
    if [ ! -e "$ENV_FILE" ]; then
        printf '%s\n' '# Secrets for edge-agent, read by systemd (mode 0600, root only). One per line:' \
            '# EDGE_PROVIDER__API_KEY=sk-...' '# EDGE_CHANNELS__TELEGRAM__BOT_TOKEN=123456:ABC...' >"$ENV_FILE"
        chmod 0600 "$ENV_FILE"
    fi
}

install_system_files() {
    mkdir -p "$STATE_DIR"
    own edge:edge 0750 "$STATE_DIR"
    mkdir -p "$SHARE"
    install_file "$HERE/install.sh" "$SHARE/install.sh" 0755
    unit_source="$HERE/../systemd/edge-agent.service"
    [ -f "$unit_source" ] || unit_source="$SHARE/edge-agent.service"
    [ -f "$unit_source" ] || die "cannot find systemd/edge-agent.service next to $HERE"
    [ "$unit_source" = "$SHARE/edge-agent.service" ] || install_file "$unit_source" "$SHARE/edge-agent.service" 0644
    install_file "$SHARE/edge-agent.service" "$UNIT" 0644
    # the drop-in that lets stdio MCP servers run sandboxed: installed by hand when wanted
    # (edge-cli doctor says the command); kept up to date here once it is
    sandbox_source="$HERE/../systemd/mcp-sandbox.conf"
    [ -f "$sandbox_source" ] && install_file "$sandbox_source" "$SHARE/mcp-sandbox.conf" 0644
    sandbox_dropin="$ROOT/etc/systemd/system/edge-agent.service.d/mcp-sandbox.conf"
    [ -f "$sandbox_dropin" ] && [ -f "$SHARE/mcp-sandbox.conf" ] && \
        install_file "$SHARE/mcp-sandbox.conf" "$sandbox_dropin" 0644

    "$VENV/bin/python" -m edge.udev "$CONFIG" >"$SHARE/udev.rules"
    install_file "$SHARE/udev.rules" "$UDEV_RULES" 0644
    rm -f "$SHARE/udev.rules"

    "$VENV/bin/edge-cli" completion bash >"$SHARE/completion.bash"
    "$VENV/bin/edge-cli" completion zsh >"$SHARE/completion.zsh"
    install_file "$SHARE/completion.bash" "$BASH_COMPLETION" 0644
    install_file "$SHARE/completion.zsh" "$ZSH_COMPLETION" 0644
    rm -f "$SHARE/completion.bash" "$SHARE/completion.zsh"

    mkdir -p "$(dirname "$BIN_LINK")"
    switch_to "$BIN_LINK" /opt/edge-agent/venv/bin/edge-cli
}

activate() {
    if ! live; then
        say "scratch root: not reloading udev or starting the service"
        return 0
    fi
    if command -v udevadm >/dev/null 2>&1; then
        udevadm control --reload && udevadm trigger --subsystem-match=tty --subsystem-match=gpio || true
    fi
    if ! systemd_running; then
        say "systemd is not running here: start the agent with edge-cli run"
        return 0
    fi
    systemctl daemon-reload
    if [ "$START" = yes ]; then
        systemctl enable --quiet edge-agent
        systemctl restart edge-agent
        say "service enabled and started: edge-cli status; edge-cli logs -f"
    fi
}

# ---- uninstall ------------------------------------------------------------------------------

uninstall() {
    if systemd_running; then
        systemctl disable --now --quiet edge-agent 2>/dev/null || true
    fi
    rm -f "$UNIT" "$UDEV_RULES" "$BASH_COMPLETION" "$ZSH_COMPLETION"
    [ -L "$BIN_LINK" ] && rm -f "$BIN_LINK"
    rm -rf "$OPT" "$CACHE_DIR"
    if systemd_running; then systemctl daemon-reload; fi
    if live && command -v udevadm >/dev/null 2>&1; then udevadm control --reload || true; fi
    if [ "$PURGE" = yes ]; then
        rm -rf "$CONF_DIR" "$STATE_DIR"
        if is_root && [ -f "$ROOT/etc/passwd" ] && has_user "$SERVICE_USER"; then
            userdel $(prefix_opt) "$SERVICE_USER"
            say "removed user $SERVICE_USER"
        fi
        say "removed edge-agent, its config and its state"
    else
        say "removed edge-agent; kept $CONF_DIR and $STATE_DIR (--purge removes them)"
    fi
}

case "$MODE" in
    uninstall) uninstall ;;
    install|upgrade)
        if [ "$MODE" = upgrade ] && [ ! -x "$VENV/bin/edge-cli" ]; then
            die "nothing to upgrade at $OPT; install first"
        fi
        ensure_user
        backup_before_upgrade
        install_venv
        install_config
        install_system_files
        activate
        say "done"
        ;;
esac
