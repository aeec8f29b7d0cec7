/* The protocol core: parses request frames, drives the board, answers, watches the host.
 * Feed received bytes to proto_rx_byte and call proto_poll regularly (every millisecond). */
#ifndef EDGE_PROTO_H
#define EDGE_PROTO_H

#include <stdint.h>

#define PROTO_VERSION 1u
#define FW_MAJOR 1u
#define FW_MINOR 0u
#define PROTO_MAX_PINS 32u
#define PROTO_MAX_SAFE 16u

typedef struct {
    uint16_t rx_frames, bad_frames, watchdog_trips;
} proto_stats_t;

void proto_init(void);
void proto_rx_byte(uint8_t byte, uint32_t now_ms);
void proto_poll(uint32_t now_ms);
const proto_stats_t *proto_stats(void);

#endif
