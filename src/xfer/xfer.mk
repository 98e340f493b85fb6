# HPN patch set: the SFTP transfer engine's layers (src/xfer/; its map is
# in HACKING.md), linked into scp and sftp.  Included by Makefile.in
# (hpn-sftp-tree.patch): a layer added here needs no patch.
HPN_SFTP_OBJS=xfer/proto.o xfer/conn.o xfer/early.o xfer/lanes.o \
	xfer/resume.o xfer/meter.o xfer/budget.o xfer/stripe.o xfer/wire.o \
	xfer/done.o xfer/file.o xfer/data.o xfer/walk.o xfer/engine.o \
	xfer/hashalg.o
