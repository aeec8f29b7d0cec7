/* board.h for the STM32F4 family at register level (no vendor HAL): GPIO, TIM2 PWM, ADC1,
 * USART1/USART2 with interrupt-driven receive, SysTick milliseconds. The board header chosen by
 * the Makefile (-include boards/NAME.h) supplies the pin table, the UART and the clock. */
#include <stdint.h>

#include "../core/board.h"
#include "stm32f4.h"

#define PIN_ENTRY(pin, caps, adc, tim) {pin, caps},
#define PIN_ADC(pin, caps, adc, tim) adc,
#define PIN_TIM(pin, caps, adc, tim) tim,

const uint8_t board_id = BOARD_ID;
const board_pin_t board_pins[] = {BOARD_PIN_TABLE(PIN_ENTRY)};
const uint8_t board_pin_count = sizeof board_pins / sizeof board_pins[0];
static const uint8_t pin_adc[] = {BOARD_PIN_TABLE(PIN_ADC)};
static const uint8_t pin_tim[] = {BOARD_PIN_TABLE(PIN_TIM)};

static volatile uint32_t millis;
static volatile uint8_t rx_ring[256];
static volatile uint8_t rx_head, rx_tail;

#if BOARD_UART == 1
#define UART USART1_BASE
#else
#define UART USART2_BASE
#endif

static int table_index(uint8_t pin)
{
    for (int i = 0; i < board_pin_count; i++)
        if (board_pins[i].pin == pin)
            return i;
    return -1;
}

static uint32_t gpio(uint8_t pin) { return GPIO_BASE(pin >> 4); }

static void set_field(uint32_t addr, unsigned shift, unsigned width, uint32_t value)
{
    uint32_t mask = ((1u << width) - 1u) << shift;
    REG(addr) = (REG(addr) & ~mask) | (value << shift);
}

static void gpio_config(uint8_t pin, uint32_t moder, uint32_t pupd, uint32_t af)
{
    uint32_t base = gpio(pin), n = pin & 15u;
    REG(RCC_AHB1ENR) |= 1u << (pin >> 4);
    set_field(base + GPIO_PUPDR, 2 * n, 2, pupd);
    set_field(base + (n < 8 ? GPIO_AFRL : GPIO_AFRH), 4 * (n & 7u), 4, af);
    set_field(base + GPIO_MODER, 2 * n, 2, moder);
}

void board_pin_mode(uint8_t pin, uint8_t mode)
{
    switch (mode) {
    case MODE_INPUT: gpio_config(pin, 0, 0, 0); break;
    case MODE_INPUT_PULLUP: gpio_config(pin, 0, 1, 0); break;
    case MODE_INPUT_PULLDOWN: gpio_config(pin, 0, 2, 0); break;
    case MODE_OUTPUT:
        REG(gpio(pin) + GPIO_BSRR) = 1u << (16 + (pin & 15u)); /* start low */
        gpio_config(pin, 1, 0, 0);
        break;
    case MODE_PWM:
        gpio_config(pin, 2, 0, 1); /* AF1: TIM2 */
        board_pwm_write(pin, 0, 0);
        break;
    case MODE_ANALOG: gpio_config(pin, 3, 0, 0); break;
    }
}

void board_digital_write(uint8_t pin, uint8_t level)
{
    uint32_t bit = 1u << (pin & 15u);
    REG(gpio(pin) + GPIO_BSRR) = level ? bit : bit << 16;
}

uint8_t board_digital_read(uint8_t pin)
{
    return (uint8_t)((REG(gpio(pin) + GPIO_IDR) >> (pin & 15u)) & 1u);
}

void board_pwm_write(uint8_t pin, uint16_t duty_bp, uint16_t freq_hz)
{
    int i = table_index(pin);
    if (i < 0 || !pin_tim[i])
        return;
    unsigned ch = pin_tim[i];
    REG(RCC_APB1ENR) |= RCC_APB1ENR_TIM2EN;
    if (freq_hz) {
        REG(TIM2_BASE + TIM_PSC) = CPU_HZ / 1000000u - 1u; /* 1 MHz counter */
        REG(TIM2_BASE + TIM_ARR) = 1000000u / freq_hz - 1u;
    } else if (REG(TIM2_BASE + TIM_ARR) == 0 || REG(TIM2_BASE + TIM_PSC) == 0) {
        REG(TIM2_BASE + TIM_PSC) = CPU_HZ / 1000000u - 1u;
        REG(TIM2_BASE + TIM_ARR) = 999u; /* 1 kHz */
    }
    uint32_t period = REG(TIM2_BASE + TIM_ARR) + 1u;
    uint32_t ccmr = TIM2_BASE + (ch <= 2 ? TIM_CCMR1 : TIM_CCMR2);
    set_field(ccmr, ((ch - 1u) & 1u) * 8u, 8, 0x68); /* PWM mode 1, preload */
    REG(TIM2_BASE + TIM_CCR1 + 4u * (ch - 1u)) = period * duty_bp / 10000u;
    REG(TIM2_BASE + TIM_CCER) |= 1u << (4u * (ch - 1u));
    REG(TIM2_BASE + TIM_CR1) |= TIM_CR1_CEN | TIM_CR1_ARPE;
    REG(TIM2_BASE + TIM_EGR) = 1u;
}

uint16_t board_adc_read(uint8_t pin)
{
    int i = table_index(pin);
    if (i < 0 || pin_adc[i] == 0xFF)
        return 0;
    REG(RCC_APB2ENR) |= RCC_APB2ENR_ADC1EN;
    REG(ADC1_BASE + ADC_CR2) |= ADC_CR2_ADON;
    REG(ADC1_BASE + ADC_SQR3) = pin_adc[i];
    REG(ADC1_BASE + ADC_CR2) |= ADC_CR2_SWSTART;
    for (uint32_t spin = 0; spin < 100000u && !(REG(ADC1_BASE + ADC_SR) & ADC_SR_EOC); spin++)
        ;
    return (uint16_t)(REG(ADC1_BASE + ADC_DR) & 0x0FFFu);
}

void board_uart_write(const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        while (!(REG(UART + USART_SR) & USART_SR_TXE))
            ;
        REG(UART + USART_DR) = data[i];
    }
}

void board_init(void)
{
#if BOARD_UART == 1
    REG(RCC_APB2ENR) |= RCC_APB2ENR_USART1EN;
    gpio_config(9, 2, 0, 7);  /* PA9 TX, AF7 */
    gpio_config(10, 2, 1, 7); /* PA10 RX, AF7, pull-up */
#else
    REG(RCC_APB1ENR) |= RCC_APB1ENR_USART2EN;
    gpio_config(2, 2, 0, 7);  /* PA2 TX */
    gpio_config(3, 2, 1, 7);  /* PA3 RX */
#endif
    REG(UART + USART_BRR) = (CPU_HZ + 115200u / 2u) / 115200u;
    REG(UART + USART_CR1) = USART_CR1_UE | USART_CR1_TE | USART_CR1_RE | USART_CR1_RXNEIE;
    NVIC_ENABLE(BOARD_UART == 1 ? USART1_IRQ : USART2_IRQ);
    REG(SYST_RVR) = CPU_HZ / 1000u - 1u;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = 7u; /* processor clock, interrupt, enable */
}

uint32_t board_millis(void) { return millis; }

int board_rx_pop(uint8_t *byte)
{
    if (rx_tail == rx_head)
        return 0;
    *byte = rx_ring[rx_tail++];
    return 1;
}

void SysTick_Handler(void) { millis++; }

static void uart_irq(void)
{
    while (REG(UART + USART_SR) & USART_SR_RXNE) {
        uint8_t byte = (uint8_t)REG(UART + USART_DR);
        if ((uint8_t)(rx_head + 1u) != rx_tail)
            rx_ring[rx_head++] = byte; /* a full ring drops the byte; the CRC catches it */
    }
}

void USART1_IRQHandler(void) { uart_irq(); }
void USART2_IRQHandler(void) { uart_irq(); }
