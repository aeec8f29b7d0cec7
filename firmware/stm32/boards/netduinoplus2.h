/* qemu's netduinoplus2 (STM32F405): the first -serial is USART1. qemu models neither GPIO nor
 * RCC (writes land in its unimplemented-device log, reads return 0), so the firmware never waits
 * on a clock-ready flag. SysTick runs from qemu's 168 MHz system clock. */
#define BOARD_ID 4
#define BOARD_UART 1
#define CPU_HZ 168000000u
#define BOARD_PIN_TABLE(X) \
    X(0,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 0, 0) /* PA0 */ \
    X(1,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 2) /* PA1 */ \
    X(5,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 1) /* PA5 */ \
    X(6,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA6 */ \
    X(7,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA7 */ \
    X(16, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 8, 0) /* PB0 */ \
    X(26, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 3) /* PB10 */ \
    X(45, CAP_DIGITAL_IN, 0xFF, 0)                             /* PC13 */
