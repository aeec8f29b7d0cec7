/* edge-agent's Firmata firmware for Uno-class boards (ATmega328P), written from the Firmata
 * protocol description (github.com/firmata/protocol, protocol.md, capability/analog-mapping,
 * servo and sampling-interval sysex). It speaks Firmata 2.5 so any Firmata host works, and adds
 * one sysex, EDGE_WATCHDOG (firmware/PROTOCOL.md): when the host falls silent for longer than the
 * armed timeout, the declared pins are driven to their safe levels by the sketch itself.
 *
 * Pins: D2..D13 digital, PWM on 3, 5, 6, 9, 10, 11, servo on 9 and 10 (Timer1 at 50 Hz: a servo
 * on either takes Timer1, so PWM on the other stops), A0..A5 analog (or digital as D14..D19).
 * D0/D1 carry the serial link. All pins start as inputs (high impedance), the safest state. */
#include <Arduino.h>

enum {
    DIGITAL_MESSAGE = 0x90, ANALOG_MESSAGE = 0xE0, REPORT_ANALOG = 0xC0, REPORT_DIGITAL = 0xD0,
    SET_PIN_MODE = 0xF4, SET_DIGITAL_PIN_VALUE = 0xF5, REPORT_VERSION = 0xF9, SYSTEM_RESET = 0xFF,
    START_SYSEX = 0xF0, END_SYSEX = 0xF7,
    EDGE_WATCHDOG = 0x0E, ANALOG_MAPPING_QUERY = 0x69, ANALOG_MAPPING_RESPONSE = 0x6A,
    CAPABILITY_QUERY = 0x6B, CAPABILITY_RESPONSE = 0x6C, PIN_STATE_QUERY = 0x6D,
    PIN_STATE_RESPONSE = 0x6E, EXTENDED_ANALOG = 0x6F, SERVO_CONFIG = 0x70, REPORT_FIRMWARE = 0x79,
    SAMPLING_INTERVAL = 0x7A
};
enum { M_INPUT = 0, M_OUTPUT = 1, M_ANALOG = 2, M_PWM = 3, M_SERVO = 4, M_PULLUP = 0x0B };
enum { WD_DISARM = 0, WD_ARM = 1, WD_QUERY = 2, WD_TRIPPED = 3 };

static const uint8_t PIN_COUNT = 20, FIRST_ANALOG = 14, MAX_SAFE = 12;
static const uint8_t FW_MAJOR = 2, FW_MINOR = 5;

static uint8_t pin_mode[PIN_COUNT];
static uint8_t pin_value[PIN_COUNT]; /* last written digital level or PWM duty */
static uint8_t report_digital[3], last_port[3], force_report; /* bit per port */
static uint8_t report_analog;        /* bit per analog channel */
static uint16_t sampling_ms = 19;
static uint32_t last_sample;
static uint16_t servo_min[2] = {544, 544}, servo_max[2] = {2400, 2400};

static uint8_t safe_pin[MAX_SAFE], safe_level[MAX_SAFE], safe_count;
static uint16_t watchdog_ms;
static uint32_t last_rx;
static bool tripped;

static uint8_t msg[64];
static uint8_t msg_len, msg_need;
static bool in_sysex;

static bool is_pwm(uint8_t p) { return p == 3 || p == 5 || p == 6 || p == 9 || p == 10 || p == 11; }
static bool is_servo(uint8_t p) { return p == 9 || p == 10; }

static void send_sysex_start(uint8_t cmd)
{
    Serial.write(START_SYSEX);
    Serial.write(cmd);
}

static void report_firmware()
{
    static const char name[] = "EdgeFirmata";
    send_sysex_start(REPORT_FIRMWARE);
    Serial.write(FW_MAJOR);
    Serial.write(FW_MINOR);
    for (const char *c = name; *c; c++) {
        Serial.write(*c & 0x7F);
        Serial.write(0);
    }
    Serial.write(END_SYSEX);
}

static void report_version()
{
    Serial.write(REPORT_VERSION);
    Serial.write(FW_MAJOR);
    Serial.write(FW_MINOR);
}

static void servo_attach(uint8_t pin)
{
    /* Timer1 fast PWM, TOP = ICR1 = 40000 at 0.5 us per tick: 20 ms frames */
    TCCR1A = (TCCR1A & (_BV(COM1A1) | _BV(COM1B1))) | _BV(WGM11);
    TCCR1B = _BV(WGM13) | _BV(WGM12) | _BV(CS11);
    ICR1 = 40000;
    TCCR1A |= pin == 9 ? _BV(COM1A1) : _BV(COM1B1);
}

static void servo_write(uint8_t pin, uint16_t value)
{
    uint8_t i = pin == 9 ? 0 : 1;
    uint16_t us = value < 544 ? servo_min[i] + (uint32_t)(servo_max[i] - servo_min[i]) * (value > 180 ? 180 : value) / 180
                              : value;
    if (pin == 9)
        OCR1A = us * 2;
    else
        OCR1B = us * 2;
}

static void set_mode(uint8_t pin, uint8_t mode)
{
    if (pin < 2 || pin >= PIN_COUNT)
        return;
    if (pin_mode[pin] == M_SERVO && mode != M_SERVO)
        TCCR1A &= pin == 9 ? ~_BV(COM1A1) : ~_BV(COM1B1);
    switch (mode) {
    case M_INPUT: pinMode(pin, INPUT); break;
    case M_PULLUP: pinMode(pin, INPUT_PULLUP); break;
    case M_OUTPUT: digitalWrite(pin, LOW); pinMode(pin, OUTPUT); break;
    case M_PWM:
        if (!is_pwm(pin))
            return;
        pinMode(pin, OUTPUT);
        analogWrite(pin, 0);
        break;
    case M_SERVO:
        if (!is_servo(pin))
            return;
        pinMode(pin, OUTPUT);
        servo_attach(pin);
        break;
    case M_ANALOG:
        if (pin < FIRST_ANALOG)
            return;
        pinMode(pin, INPUT);
        break;
    default: return;
    }
    pin_mode[pin] = mode;
    pin_value[pin] = 0;
    if (mode != M_ANALOG && pin >= FIRST_ANALOG)
        report_analog &= ~(1 << (pin - FIRST_ANALOG));
    uint8_t port = pin / 8;
    if (mode == M_INPUT || mode == M_PULLUP)
        force_report |= 1 << port; /* report the port with its new input */
}

static void write_pin(uint8_t pin, uint8_t level)
{
    if (pin >= PIN_COUNT || pin_mode[pin] != M_OUTPUT)
        return;
    digitalWrite(pin, level ? HIGH : LOW);
    pin_value[pin] = level ? 1 : 0;
}

static void analog_write(uint8_t pin, uint16_t value)
{
    if (pin >= PIN_COUNT)
        return;
    if (pin_mode[pin] == M_PWM) {
        analogWrite(pin, value > 255 ? 255 : value);
        pin_value[pin] = value > 255 ? 255 : value;
    } else if (pin_mode[pin] == M_SERVO) {
        servo_write(pin, value);
    }
}

static void system_reset()
{
    for (uint8_t p = 2; p < PIN_COUNT; p++)
        set_mode(p, M_INPUT);
    report_analog = 0;
    report_digital[0] = report_digital[1] = report_digital[2] = 0;
    watchdog_ms = 0;
    safe_count = 0;
}

static void capability_response()
{
    send_sysex_start(CAPABILITY_RESPONSE);
    for (uint8_t p = 0; p < PIN_COUNT; p++) {
        if (p >= 2) {
            Serial.write(M_INPUT); Serial.write(1);
            Serial.write(M_PULLUP); Serial.write(1);
            Serial.write(M_OUTPUT); Serial.write(1);
        }
        if (p >= FIRST_ANALOG) { Serial.write(M_ANALOG); Serial.write(10); }
        if (is_pwm(p)) { Serial.write(M_PWM); Serial.write(8); }
        if (is_servo(p)) { Serial.write(M_SERVO); Serial.write(14); }
        Serial.write(0x7F);
    }
    Serial.write(END_SYSEX);
}

static void analog_mapping_response()
{
    send_sysex_start(ANALOG_MAPPING_RESPONSE);
    for (uint8_t p = 0; p < PIN_COUNT; p++)
        Serial.write(p >= FIRST_ANALOG ? p - FIRST_ANALOG : 0x7F);
    Serial.write(END_SYSEX);
}

static void pin_state_response(uint8_t pin)
{
    if (pin >= PIN_COUNT)
        return;
    send_sysex_start(PIN_STATE_RESPONSE);
    Serial.write(pin);
    Serial.write(pin_mode[pin]);
    Serial.write(pin_value[pin] & 0x7F);
    if (pin_value[pin] > 0x7F)
        Serial.write(pin_value[pin] >> 7);
    Serial.write(END_SYSEX);
}

static void drive_safe_values()
{
    for (uint8_t i = 0; i < safe_count; i++) {
        uint8_t p = safe_pin[i];
        if (pin_mode[p] == M_PWM || pin_mode[p] == M_SERVO) {
            if (pin_mode[p] == M_SERVO)
                TCCR1A &= p == 9 ? ~_BV(COM1A1) : ~_BV(COM1B1);
            pin_mode[p] = M_OUTPUT;
        }
        if (pin_mode[p] == M_OUTPUT)
            write_pin(p, safe_level[i]);
    }
}

static void edge_watchdog(const uint8_t *d, uint8_t n)
{
    if (n < 1)
        return;
    if (d[0] == WD_ARM && n >= 3) {
        watchdog_ms = d[1] | (uint16_t)d[2] << 7;
        safe_count = 0;
        for (uint8_t i = 3; i + 1 < n && safe_count < MAX_SAFE; i += 2) {
            if (d[i] >= 2 && d[i] < PIN_COUNT) {
                safe_pin[safe_count] = d[i];
                safe_level[safe_count++] = d[i + 1] ? 1 : 0;
            }
        }
        tripped = false;
    } else if (d[0] == WD_DISARM) {
        watchdog_ms = 0;
    }
    if (d[0] <= WD_QUERY) { /* acknowledge: also tells the host the extension is here */
        send_sysex_start(EDGE_WATCHDOG);
        Serial.write(WD_QUERY);
        Serial.write(END_SYSEX);
    }
}

static void handle_sysex(const uint8_t *d, uint8_t n)
{
    switch (d[0]) {
    case REPORT_FIRMWARE: report_firmware(); break;
    case CAPABILITY_QUERY: capability_response(); break;
    case ANALOG_MAPPING_QUERY: analog_mapping_response(); break;
    case PIN_STATE_QUERY: if (n >= 2) pin_state_response(d[1]); break;
    case SAMPLING_INTERVAL:
        if (n >= 3)
            sampling_ms = max(1, d[1] | d[2] << 7);
        break;
    case SERVO_CONFIG:
        if (n >= 6 && is_servo(d[1])) {
            servo_min[d[1] == 9 ? 0 : 1] = d[2] | d[3] << 7;
            servo_max[d[1] == 9 ? 0 : 1] = d[4] | d[5] << 7;
            set_mode(d[1], M_SERVO);
        }
        break;
    case EXTENDED_ANALOG:
        if (n >= 3) {
            uint16_t v = 0;
            for (uint8_t i = 2; i < n && i < 5; i++)
                v |= (uint16_t)d[i] << (7 * (i - 2));
            analog_write(d[1], v);
        }
        break;
    case EDGE_WATCHDOG: edge_watchdog(d + 1, n - 1); break;
    }
}

static void handle_message()
{
    uint8_t cmd = msg[0] < 0xF0 ? msg[0] & 0xF0 : msg[0], ch = msg[0] & 0x0F;
    switch (cmd) {
    case DIGITAL_MESSAGE: {
        uint8_t bits = msg[1] | msg[2] << 7;
        for (uint8_t i = 0; i < 8; i++)
            write_pin(ch * 8 + i, bits >> i & 1);
        break;
    }
    case ANALOG_MESSAGE: {
        uint8_t pin = ch; /* the pin number for PWM/servo (StandardFirmata 2.5 semantics) */
        analog_write(pin, msg[1] | msg[2] << 7);
        break;
    }
    case REPORT_ANALOG:
        if (ch < 6) {
            if (msg[1])
                report_analog |= 1 << ch;
            else
                report_analog &= ~(1 << ch);
        }
        break;
    case REPORT_DIGITAL:
        if (ch < 3) {
            report_digital[ch] = msg[1];
            force_report |= 1 << ch;
        }
        break;
    case SET_PIN_MODE: set_mode(msg[1], msg[2]); break;
    case SET_DIGITAL_PIN_VALUE: write_pin(msg[1], msg[2]); break;
    case REPORT_VERSION: report_version(); break;
    case SYSTEM_RESET: system_reset(); break;
    }
}

static uint8_t message_length(uint8_t b)
{
    switch (b < 0xF0 ? b & 0xF0 : b) {
    case DIGITAL_MESSAGE: case ANALOG_MESSAGE: case SET_PIN_MODE: case SET_DIGITAL_PIN_VALUE:
        return 3;
    case REPORT_ANALOG: case REPORT_DIGITAL: return 2;
    case REPORT_VERSION: case SYSTEM_RESET: return 1;
    default: return 0;
    }
}

static void receive(uint8_t b)
{
    last_rx = millis();
    tripped = false;
    if (in_sysex) {
        if (b == END_SYSEX) {
            in_sysex = false;
            if (msg_len)
                handle_sysex(msg, msg_len);
        } else if (msg_len < sizeof msg) {
            msg[msg_len++] = b;
        }
        return;
    }
    if (b == START_SYSEX) {
        in_sysex = true;
        msg_len = 0;
        return;
    }
    if (b & 0x80) { /* a command byte starts a new message */
        msg[0] = b;
        msg_len = 1;
        msg_need = message_length(b);
    } else if (msg_need && msg_len < msg_need) {
        msg[msg_len++] = b;
    }
    if (msg_need && msg_len == msg_need) {
        handle_message();
        msg_need = 0;
        msg_len = 0;
    }
}

static void report_inputs()
{
    for (uint8_t port = 0; port < 3; port++) {
        if (!report_digital[port])
            continue;
        uint8_t bits = 0;
        for (uint8_t i = 0; i < 8; i++) {
            uint8_t p = port * 8 + i;
            if (p < PIN_COUNT && (pin_mode[p] == M_INPUT || pin_mode[p] == M_PULLUP) &&
                digitalRead(p))
                bits |= 1 << i;
        }
        if (bits != last_port[port] || (force_report & (1 << port))) {
            last_port[port] = bits;
            force_report &= ~(1 << port);
            Serial.write(DIGITAL_MESSAGE | port);
            Serial.write(bits & 0x7F);
            Serial.write(bits >> 7);
        }
    }
}

void setup()
{
    Serial.begin(57600);
    system_reset();
    report_version();
    report_firmware();
}

void loop()
{
    while (Serial.available())
        receive(Serial.read());
    report_inputs();
    uint32_t now = millis();
    if (watchdog_ms && !tripped && now - last_rx >= watchdog_ms) {
        tripped = true;
        drive_safe_values();
        send_sysex_start(EDGE_WATCHDOG);
        Serial.write(WD_TRIPPED);
        Serial.write(END_SYSEX);
    }
    if (now - last_sample >= sampling_ms) {
        last_sample = now;
        for (uint8_t ch = 0; ch < 6; ch++) {
            if (report_analog & (1 << ch)) {
                int v = analogRead(ch);
                Serial.write(ANALOG_MESSAGE | ch);
                Serial.write(v & 0x7F);
                Serial.write(v >> 7);
            }
        }
    }
}
