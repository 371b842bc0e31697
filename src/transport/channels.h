/* channels.h — channel memory layout helpers shared by transports (see channels.c). */
#ifndef COLLIE_CHANNELS_H
#define COLLIE_CHANNELS_H

#include "collie.h"
#include "transport/transport.h"

size_t collie_slot_stride(uint32_t slot_bytes);
/* Bytes of one rank's inbox region (counters and channels from every sender). */
size_t collie_inbox_bytes(int size, uint32_t nslots, uint32_t slot_bytes);
/* Fills tp->to/from/sent/received from the inbox base of every rank (tp->rank, size,
 * nslots, slot_bytes already set).  COLLIE_OK or COLLIE_ERR_NOMEM. */
int collie_channels_wire(collie_transport *tp, char *const *inboxes);
void collie_channels_free(collie_transport *tp);

#endif
