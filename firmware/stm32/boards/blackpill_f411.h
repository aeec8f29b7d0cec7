/* WeAct Black Pill F411: USART1 on PA9/PA10, LED on PC13 (active low), KEY on PA0. */
#define BOARD_ID 3
#define BOARD_UART 1
#define CPU_HZ 16000000u
#define BOARD_PIN_TABLE(X) \
    X(0,  CAP_DIGITAL_IN | CAP_ANALOG, 0, 0)                   /* PA0 KEY */ \
    X(1,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM | CAP_ANALOG, 1, 2) /* PA1 */ \
    X(2,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 2, 0) /* PA2 */ \
    X(3,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 3, 0) /* PA3 */ \
    X(4,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 4, 0) /* PA4 */ \
    X(5,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 5, 1)    /* PA5 */ \
    X(6,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA6 */ \
    X(7,  CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PA7 */ \
    X(16, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 8, 0) /* PB0 */ \
    X(17, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_ANALOG, 9, 0) /* PB1 */ \
    X(26, CAP_DIGITAL_IN | CAP_DIGITAL_OUT | CAP_PWM, 0xFF, 3) /* PB10 */ \
    X(28, CAP_DIGITAL_IN | CAP_DIGITAL_OUT, 0xFF, 0)           /* PB12 */ \
    X(45, CAP_DIGITAL_OUT, 0xFF, 0)                            /* PC13 LED */
