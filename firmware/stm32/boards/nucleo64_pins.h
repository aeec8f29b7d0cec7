/* The Nucleo-64 F401RE/F411RE pinout (ST-Link virtual COM port on USART2, PA2/PA3; LD2 on PA5;
   B1 on PC13), shared by both boards' headers. */
#define BOARD_UART 2
#define CPU_HZ 16000000u /* HSI, no PLL: nothing to wait for at start */
/*      pin  caps                   adc  tim2 channel (0 = none) */
#define BOARD_PIN_TABLE(X) \
    X(0,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 0, 0) /* PA0 A0 */ \
    X(1,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 1, 0) /* PA1 A1 */ \
    X(4,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 4, 0) /* PA4 A2 */ \
    X(5,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 1) /* PA5 LD2 */ \
    X(6,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA6 D12 */ \
    X(7,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA7 D11 */ \
    X(8,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA8 D7 */ \
    X(9,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA9 D8 */ \
    X(10, CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA10 D2 */ \
    X(16, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 8, 0) /* PB0 A3 */ \
    X(19, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 2) /* PB3 D3 */ \
    X(20, CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PB4 D5 */ \
    X(21, CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PB5 D4 */ \
    X(26, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 3) /* PB10 D6 */ \
    X(45, CAP_DIGITAL_IN, 0xFF, 0)                             /* PC13 B1 */
