/* The few STM32F4 registers the firmware touches (RM0368/RM0383/RM0090). */
#ifndef EDGE_STM32F4_H
#define EDGE_STM32F4_H

#include <stdint.h>

#define REG(addr) (*(volatile uint32_t *)(addr))

#define RCC_BASE 0x40023800u
#define RCC_AHB1ENR (RCC_BASE + 0x30u)
#define RCC_APB1ENR (RCC_BASE + 0x40u)
#define RCC_APB2ENR (RCC_BASE + 0x44u)
#define RCC_APB1ENR_TIM2EN (1u << 0)
#define RCC_APB1ENR_USART2EN (1u << 17)
#define RCC_APB2ENR_USART1EN (1u << 4)
#define RCC_APB2ENR_ADC1EN (1u << 8)

#define GPIO_BASE(port) (0x40020000u + 0x400u * (port))
#define GPIO_MODER 0x00u
#define GPIO_PUPDR 0x0Cu
#define GPIO_IDR 0x10u
#define GPIO_BSRR 0x18u
#define GPIO_AFRL 0x20u
#define GPIO_AFRH 0x24u

#define USART1_BASE 0x40011000u
#define USART2_BASE 0x40004400u
#define USART_SR 0x00u
#define USART_DR 0x04u
#define USART_BRR 0x08u
#define USART_CR1 0x0Cu
#define USART_SR_RXNE (1u << 5)
#define USART_SR_TXE (1u << 7)
#define USART_CR1_UE (1u << 13)
#define USART_CR1_TE (1u << 3)
#define USART_CR1_RE (1u << 2)
#define USART_CR1_RXNEIE (1u << 5)
#define USART1_IRQ 37u
#define USART2_IRQ 38u

#define TIM2_BASE 0x40000000u
#define TIM_CR1 0x00u
#define TIM_EGR 0x14u
#define TIM_CCMR1 0x18u
#define TIM_CCMR2 0x1Cu
#define TIM_CCER 0x20u
#define TIM_PSC 0x28u
#define TIM_ARR 0x2Cu
#define TIM_CCR1 0x34u
#define TIM_CR1_CEN (1u << 0)
#define TIM_CR1_ARPE (1u << 7)

#define ADC1_BASE 0x40012000u
#define ADC_SR 0x00u
#define ADC_CR2 0x08u
#define ADC_SQR3 0x34u
#define ADC_DR 0x4Cu
#define ADC_SR_EOC (1u << 1)
#define ADC_CR2_ADON (1u << 0)
#define ADC_CR2_SWSTART (1u << 30)

#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define NVIC_ENABLE(irq) (REG(0xE000E100u + 4u * ((irq) >> 5)) = 1u << ((irq) & 31u))

void board_init(void);
uint32_t board_millis(void);
int board_rx_pop(uint8_t *byte);

#endif
