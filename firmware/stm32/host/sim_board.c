/* board.h on the host: a handful of pins with every capability mix, levels kept in memory. */
#include "sim_board.h"

#include "../core/board.h"

const uint8_t board_id = 0xFE;
const board_pin_t board_pins[] = {
    {0, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM | CAP_ANALOG}, /* PA0 */
    {5, CAP_DIGITAL_IN | CAP_DIGITAL_OUT},                        /* PA5 */
    {6, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM},              /* PA6 */
    {16, CAP_DIGITAL_IN | CAP_ANALOG},                            /* PB0 */
    {45, CAP_DIGITAL_IN},                                         /* PC13 */
};
const uint8_t board_pin_count = sizeof board_pins / sizeof board_pins[0];

static uint8_t mode[64], out_level[64], in_level[64], driven[64];
static uint16_t duty[64], adc[64];
void (*sim_uart_sink)(const uint8_t *data, size_t len);

void sim_reset(void)
{
    for (int i = 0; i < 64; i++) {
        mode[i] = MODE_UNSET;
        out_level[i] = in_level[i] = driven[i] = 0;
        duty[i] = adc[i] = 0;
    }
}

void sim_drive(uint8_t pin, uint8_t level)
{
    in_level[pin & 63] = level;
    driven[pin & 63] = 1;
}

void sim_set_adc(uint8_t pin, uint16_t raw) { adc[pin & 63] = raw; }

int sim_level(uint8_t pin)
{
    pin &= 63;
    if (mode[pin] == MODE_OUTPUT)
        return out_level[pin];
    if (mode[pin] == MODE_PWM)
        return duty[pin];
    return -1;
}

void board_pin_mode(uint8_t pin, uint8_t m) { mode[pin & 63] = m; }
void board_digital_write(uint8_t pin, uint8_t level) { out_level[pin & 63] = level; }

uint8_t board_digital_read(uint8_t pin)
{
    pin &= 63;
    if (mode[pin] == MODE_OUTPUT)
        return out_level[pin];
    if (!driven[pin])
        return mode[pin] == MODE_INPUT_PULLUP;
    return in_level[pin];
}

void board_pwm_write(uint8_t pin, uint16_t duty_bp, uint16_t freq_hz)
{
    (void)freq_hz;
    duty[pin & 63] = duty_bp;
}

uint16_t board_adc_read(uint8_t pin) { return adc[pin & 63]; }

void board_uart_write(const uint8_t *data, size_t len)
{
    if (sim_uart_sink)
        sim_uart_sink(data, len);
}
