/* Request dispatch, watchdog with safe values, and input-change events (firmware/PROTOCOL.md). */
#include "proto.h"

#include "board.h"
#include "frame.h"

enum { REPLY_BIT = 0x80, TYPE_ERROR = 0x7F, EVENT_INPUT = 0x40, EVENT_WATCHDOG = 0x41 };
enum {
    CMD_HELLO = 1, CMD_PIN_MODE, CMD_DIGITAL_WRITE, CMD_DIGITAL_READ, CMD_PWM_WRITE, CMD_ADC_READ,
    CMD_WATCHDOG, CMD_SAFE_STATE, CMD_SUBSCRIBE, CMD_PING, CMD_STATS
};
enum {
    ERR_UNKNOWN_COMMAND = 1, ERR_BAD_LENGTH, ERR_BAD_PIN, ERR_MODE_UNSUPPORTED, ERR_WRONG_MODE,
    ERR_BAD_VALUE, ERR_TOO_MANY, ERR_VERSION_MISMATCH
};

static struct {
    uint8_t rx[FRAME_WIRE_MAX];
    uint16_t rx_len;
    uint8_t rx_overflow;
    uint8_t mode[PROTO_MAX_PINS];
    uint8_t subscribed[PROTO_MAX_PINS];
    uint8_t last_level[PROTO_MAX_PINS]; /* inputs: last reported; outputs: last driven */
    uint8_t safe_pin[PROTO_MAX_SAFE], safe_level[PROTO_MAX_SAFE], safe_count;
    uint16_t watchdog_ms;
    uint32_t last_rx_ms;
    uint8_t tripped;
    uint8_t event_seq;
    proto_stats_t stats;
} st;

static int pin_index(uint8_t pin)
{
    for (int i = 0; i < board_pin_count; i++)
        if (board_pins[i].pin == pin)
            return i;
    return -1;
}

static void send(const uint8_t *payload, uint8_t len)
{
    uint8_t wire[FRAME_WIRE_MAX];
    size_t n = frame_encode(payload, len, wire);
    board_uart_write(wire, n);
}

static void send_error(uint8_t cmd, uint8_t id, uint8_t code)
{
    uint8_t out[4] = {TYPE_ERROR, id, cmd, code};
    send(out, 4);
}

static void send_event(uint8_t type, const uint8_t *body, uint8_t len)
{
    uint8_t out[8] = {type, st.event_seq++};
    for (uint8_t i = 0; i < len; i++)
        out[2 + i] = body[i];
    send(out, (uint8_t)(2 + len));
}

static uint8_t mode_supported(uint8_t caps, uint8_t mode)
{
    switch (mode) {
    case MODE_INPUT: case MODE_INPUT_PULLUP: case MODE_INPUT_PULLDOWN:
        return caps & CAP_DIGITAL_IN;
    case MODE_OUTPUT: return caps & CAP_DIGITAL_OUT;
    case MODE_PWM: return caps & CAP_PWM;
    case MODE_ANALOG: return caps & CAP_ANALOG;
    default: return 0;
    }
}

static uint8_t is_input(uint8_t mode)
{
    return mode == MODE_INPUT || mode == MODE_INPUT_PULLUP || mode == MODE_INPUT_PULLDOWN;
}

static void drive_safe_values(void)
{
    for (uint8_t i = 0; i < st.safe_count; i++) {
        int idx = pin_index(st.safe_pin[i]);
        if (idx < 0)
            continue;
        if (st.mode[idx] == MODE_OUTPUT) {
            board_digital_write(st.safe_pin[i], st.safe_level[i]);
            st.last_level[idx] = st.safe_level[i];
        }
        else if (st.mode[idx] == MODE_PWM)
            board_pwm_write(st.safe_pin[i], st.safe_level[i] ? 10000 : 0, 0);
    }
}

/* Handle one decoded request; out holds the reply being built (type and id already set). */
static void handle(const uint8_t *f, uint8_t len)
{
    uint8_t cmd = f[0], id = f[1], n = (uint8_t)(len - 2);
    const uint8_t *b = f + 2;
    uint8_t out[FRAME_MAX - 2];
    uint8_t o = 2;
    out[0] = (uint8_t)(cmd | REPLY_BIT);
    out[1] = id;
    static const uint8_t sizes[] = {0, 1, 2, 2, 1, 5, 1, 2, 0xFF, 2, 0, 0};
    if (cmd == 0 || cmd > CMD_STATS) {
        send_error(cmd, id, ERR_UNKNOWN_COMMAND);
        return;
    }
    if ((sizes[cmd] != 0xFF && n != sizes[cmd]) ||
        (cmd == CMD_SAFE_STATE && (n & 1))) {
        send_error(cmd, id, ERR_BAD_LENGTH);
        return;
    }
    int idx = -1;
    if ((cmd >= CMD_PIN_MODE && cmd <= CMD_ADC_READ) || cmd == CMD_SUBSCRIBE) {
        idx = pin_index(b[0]);
        if (idx < 0) {
            send_error(cmd, id, ERR_BAD_PIN);
            return;
        }
    }
    switch (cmd) {
    case CMD_HELLO:
        if (b[0] != PROTO_VERSION) {
            send_error(cmd, id, ERR_VERSION_MISMATCH);
            return;
        }
        out[o++] = PROTO_VERSION;
        out[o++] = FW_MAJOR;
        out[o++] = FW_MINOR;
        out[o++] = board_id;
        for (uint8_t i = 0; i < board_pin_count && o + 2u <= FRAME_MAX - 2u; i++) {
            out[o++] = board_pins[i].pin;
            out[o++] = board_pins[i].caps;
        }
        break;
    case CMD_PIN_MODE:
        if (!mode_supported(board_pins[idx].caps, b[1])) {
            send_error(cmd, id, ERR_MODE_UNSUPPORTED);
            return;
        }
        board_pin_mode(b[0], b[1]);
        st.mode[idx] = b[1];
        st.last_level[idx] = is_input(b[1]) ? board_digital_read(b[0]) : 0;
        if (!is_input(b[1]))
            st.subscribed[idx] = 0;
        out[o++] = b[0];
        out[o++] = b[1];
        break;
    case CMD_DIGITAL_WRITE:
        if (st.mode[idx] != MODE_OUTPUT) {
            send_error(cmd, id, ERR_WRONG_MODE);
            return;
        }
        if (b[1] > 1) {
            send_error(cmd, id, ERR_BAD_VALUE);
            return;
        }
        board_digital_write(b[0], b[1]);
        st.last_level[idx] = b[1];
        out[o++] = b[0];
        out[o++] = b[1];
        break;
    case CMD_DIGITAL_READ:
        if (st.mode[idx] == MODE_UNSET || st.mode[idx] == MODE_ANALOG) {
            send_error(cmd, id, ERR_WRONG_MODE);
            return;
        }
        out[o++] = b[0];
        /* an output reads back what was driven (qemu models no GPIO input register) */
        out[o++] = st.mode[idx] == MODE_OUTPUT ? st.last_level[idx] : board_digital_read(b[0]);
        break;
    case CMD_PWM_WRITE: {
        uint16_t duty = (uint16_t)((b[1] << 8) | b[2]), freq = (uint16_t)((b[3] << 8) | b[4]);
        if (st.mode[idx] != MODE_PWM) {
            send_error(cmd, id, ERR_WRONG_MODE);
            return;
        }
        if (duty > 10000) {
            send_error(cmd, id, ERR_BAD_VALUE);
            return;
        }
        board_pwm_write(b[0], duty, freq);
        out[o++] = b[0];
        out[o++] = b[1];
        out[o++] = b[2];
        break;
    }
    case CMD_ADC_READ: {
        if (st.mode[idx] != MODE_ANALOG) {
            send_error(cmd, id, ERR_WRONG_MODE);
            return;
        }
        uint16_t raw = board_adc_read(b[0]);
        out[o++] = b[0];
        out[o++] = (uint8_t)(raw >> 8);
        out[o++] = (uint8_t)raw;
        break;
    }
    case CMD_WATCHDOG:
        st.watchdog_ms = (uint16_t)((b[0] << 8) | b[1]);
        out[o++] = b[0];
        out[o++] = b[1];
        break;
    case CMD_SAFE_STATE:
        if (n / 2 > PROTO_MAX_SAFE) {
            send_error(cmd, id, ERR_TOO_MANY);
            return;
        }
        for (uint8_t i = 0; i < n; i += 2) {
            int k = pin_index(b[i]);
            if (k < 0) {
                send_error(cmd, id, ERR_BAD_PIN);
                return;
            }
            if (!(board_pins[k].caps & (CAP_DIGITAL_OUT | CAP_PWM))) {
                send_error(cmd, id, ERR_MODE_UNSUPPORTED);
                return;
            }
            if (b[i + 1] > 1) {
                send_error(cmd, id, ERR_BAD_VALUE);
                return;
            }
        }
        st.safe_count = (uint8_t)(n / 2);
        for (uint8_t i = 0; i < st.safe_count; i++) {
            st.safe_pin[i] = b[2 * i];
            st.safe_level[i] = b[2 * i + 1];
        }
        out[o++] = st.safe_count;
        break;
    case CMD_SUBSCRIBE:
        if (!is_input(st.mode[idx])) {
            send_error(cmd, id, ERR_WRONG_MODE);
            return;
        }
        if (b[1] > 1) {
            send_error(cmd, id, ERR_BAD_VALUE);
            return;
        }
        st.subscribed[idx] = b[1];
        st.last_level[idx] = board_digital_read(b[0]);
        out[o++] = b[0];
        out[o++] = b[1];
        out[o++] = st.last_level[idx];
        break;
    case CMD_PING:
        break;
    case CMD_STATS:
        out[o++] = (uint8_t)(st.stats.rx_frames >> 8);
        out[o++] = (uint8_t)st.stats.rx_frames;
        out[o++] = (uint8_t)(st.stats.bad_frames >> 8);
        out[o++] = (uint8_t)st.stats.bad_frames;
        out[o++] = (uint8_t)(st.stats.watchdog_trips >> 8);
        out[o++] = (uint8_t)st.stats.watchdog_trips;
        break;
    }
    send(out, o);
}

void proto_init(void)
{
    uint8_t *p = (uint8_t *)&st;
    for (size_t i = 0; i < sizeof st; i++)
        p[i] = 0;
    for (unsigned i = 0; i < PROTO_MAX_PINS; i++)
        st.mode[i] = MODE_UNSET;
}

void proto_rx_byte(uint8_t byte, uint32_t now_ms)
{
    if (byte != 0) {
        if (st.rx_len < sizeof st.rx)
            st.rx[st.rx_len++] = byte;
        else
            st.rx_overflow = 1;
        return;
    }
    uint16_t len = st.rx_len;
    uint8_t overflow = st.rx_overflow;
    st.rx_len = 0;
    st.rx_overflow = 0;
    if (len == 0 && !overflow)
        return; /* an empty frame: the host resynchronising */
    uint8_t frame[FRAME_MAX];
    int n = overflow ? -1 : frame_decode(st.rx, len, frame);
    if (n < 2) {
        st.stats.bad_frames++;
        return;
    }
    st.stats.rx_frames++;
    st.last_rx_ms = now_ms;
    st.tripped = 0;
    handle(frame, (uint8_t)n);
}

void proto_poll(uint32_t now_ms)
{
    if (st.watchdog_ms && !st.tripped && (uint32_t)(now_ms - st.last_rx_ms) >= st.watchdog_ms) {
        st.tripped = 1;
        st.stats.watchdog_trips++;
        drive_safe_values();
        send_event(EVENT_WATCHDOG, 0, 0);
    }
    for (int i = 0; i < board_pin_count; i++) {
        if (!st.subscribed[i] || !is_input(st.mode[i]))
            continue;
        uint8_t level = board_digital_read(board_pins[i].pin);
        if (level != st.last_level[i]) {
            st.last_level[i] = level;
            uint8_t body[2] = {board_pins[i].pin, level};
            send_event(EVENT_INPUT, body, 2);
        }
    }
}

const proto_stats_t *proto_stats(void)
{
    return &st.stats;
}
