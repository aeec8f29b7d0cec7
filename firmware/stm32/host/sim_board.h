/* Simulated pins for running the protocol core on the host. */
#ifndef EDGE_SIM_BOARD_H
#define EDGE_SIM_BOARD_H

#include <stddef.h>
#include <stdint.h>

void sim_reset(void);
void sim_drive(uint8_t pin, uint8_t level);  /* an external signal on an input pin */
void sim_set_adc(uint8_t pin, uint16_t raw);
int sim_level(uint8_t pin);                  /* output level, duty for PWM (0..10000), -1 unknown */
extern void (*sim_uart_sink)(const uint8_t *data, size_t len);

#endif
