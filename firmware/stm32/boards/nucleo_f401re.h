/* Nucleo-F401RE: ST-Link virtual COM port on USART2 (PA2/PA3), LD2 on PA5, B1 on PC13. */
#define BOARD_ID 1
#include "nucleo64_pins.h"
