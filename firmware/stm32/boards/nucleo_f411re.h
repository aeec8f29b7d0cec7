/* Nucleo-F411RE: the F401RE's pinout on a faster chip. */
#define BOARD_ID 2
#include "nucleo64_pins.h"
