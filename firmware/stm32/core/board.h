/* What the protocol core needs from a board. One implementation per target: boards/stm32f4.c
 * (register level, Nucleo-F401RE/F411RE, Black Pill F411, qemu netduinoplus2) and
 * host/sim_board.c (simulated pins for the conformance checker). */
#ifndef EDGE_BOARD_H
#define EDGE_BOARD_H

#include <stddef.h>
#include <stdint.h>

enum pin_caps { CAP_DIGITAL_IN = 1, CAP_DIGITAL_OUT = 2, CAP_PWM = 4, CAP_ANALOG = 8 };
enum pin_mode {
    MODE_INPUT = 0, MODE_INPUT_PULLUP = 1, MODE_INPUT_PULLDOWN = 2,
    MODE_OUTPUT = 3, MODE_PWM = 4, MODE_ANALOG = 5, MODE_UNSET = 0xFF
};

typedef struct {
    uint8_t pin;  /* port * 16 + index: PA5 = 5, PC13 = 45 */
    uint8_t caps; /* enum pin_caps */
} board_pin_t;

extern const uint8_t board_id;
extern const board_pin_t board_pins[];
extern const uint8_t board_pin_count;

void board_pin_mode(uint8_t pin, uint8_t mode);
void board_digital_write(uint8_t pin, uint8_t level);
uint8_t board_digital_read(uint8_t pin);
void board_pwm_write(uint8_t pin, uint16_t duty_bp, uint16_t freq_hz); /* duty in 1/10000 */
uint16_t board_adc_read(uint8_t pin);                                   /* 12-bit raw */
void board_uart_write(const uint8_t *data, size_t len);

#endif
