# HPN patch set: the SFTP transfer engine's layers (src/xfer/; its map is
# in HACKING.md), linked into scp and sftp.  Included by Makefile.in
# (hpn-sftp-tree.patch): a layer added here needs no patch.
HPN_SFTP_OBJS=xfer/engine.o xfer/resume.o xfer/lanes.o
