/* Framing for the edge-agent board protocol (firmware/PROTOCOL.md): COBS with a zero delimiter,
 * CRC-16/CCITT-FALSE over the payload, big-endian. Plain C99: builds for the MCU and the host. */
#ifndef EDGE_FRAME_H
#define EDGE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_MAX 96u /* largest decoded frame: type, id, body, crc */
#define FRAME_WIRE_MAX (FRAME_MAX + FRAME_MAX / 254u + 2u)

uint16_t frame_crc16(const uint8_t *data, size_t len);

/* Encode len payload bytes plus their CRC into out (COBS, trailing 0); returns bytes written. */
size_t frame_encode(const uint8_t *payload, size_t len, uint8_t *out);

/* Decode one COBS block (no delimiter) into out; returns payload length without the CRC, or -1
 * when the block is malformed, too short or too long, or its CRC does not match. */
int frame_decode(const uint8_t *in, size_t len, uint8_t *out);

#endif
