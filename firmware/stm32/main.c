/* STM32 firmware entry: bring up the board, then feed received bytes to the protocol core and
 * poll it once a millisecond, sleeping in between (WFI wakes on the UART and SysTick). */
#include "boards/stm32f4.h"
#include "core/proto.h"

int main(void)
{
    board_init();
    proto_init();
    uint32_t polled = board_millis();
    for (;;) {
        uint8_t byte;
        while (board_rx_pop(&byte))
            proto_rx_byte(byte, board_millis());
        uint32_t now = board_millis();
        if (now != polled) {
            polled = now;
            proto_poll(now);
        }
        __asm__ volatile("wfi");
    }
}
