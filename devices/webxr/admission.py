"""One headset at a time: who may hold the headset connection, and what the others are told.

Two pages both streaming hands made the frames alternate and the robot's wrist swing between two
people's hands. Now the first page connected is *the* headset until it leaves; a second page is
refused with a close code and reason it shows to its wearer, unless it asks to take over
(``&takeover=1``, a button on that page), which tells the first one why it was dropped.

A page identifies itself with a random per-load id (``&client=``): when its Wi-Fi drops and it
reconnects before the server has noticed the old socket is dead, the new socket replaces the old
one instead of being refused as a second headset.
"""
from __future__ import annotations

import enum

# Websocket close codes the page understands (4000-4999: private use, RFC 6455 section 7.4.2).
CLOSE_APP_STOPPED = 1001          # "going away": the app stopped serving (episode over, app quit)
CLOSE_BUSY = 4409                 # refused: another headset is connected
CLOSE_TAKEN_OVER = 4410           # dropped: another headset took over explicitly
CLOSE_REPLACED = 4411             # dropped: the same page connected again

# Close reasons are at most 123 bytes (RFC 6455); the page shows them to the operator.
REASON_BUSY = "another headset is connected to the app (use Take over on this page to replace it)"
REASON_TAKEN_OVER = "another headset took over the connection"
REASON_REPLACED = "replaced by a new connection from this page"
REASON_APP_STOPPED = "the app closed the headset connection"


class Admission(enum.Enum):
    ACCEPT = "accept"             # nobody is connected
    REPLACE = "replace"           # the connected page reconnected: retire its old socket
    TAKEOVER = "takeover"         # explicit takeover: retire the other headset
    REFUSE = "refuse"             # another headset is connected


def admit(active_client: str | None, client: str, takeover: bool) -> Admission:
    """The decision for a page ``client`` (its id, "" when it sent none) connecting while
    ``active_client`` (None: nobody) holds the connection."""
    if active_client is None:
        return Admission.ACCEPT
    if client and client == active_client:
        return Admission.REPLACE
    return Admission.TAKEOVER if takeover else Admission.REFUSE
