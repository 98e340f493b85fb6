# HPN patch set: the SFTP transfer engine's layers (src/xfer/; its map is
# in HACKING.md), linked into scp and sftp.  Included by Makefile.in
# (hpn-sftp-tree.patch): a layer added here needs no patch.
HPN_SFTP_OBJS=xfer/proto.o xfer/conn.o xfer/early.o xfer/lanes.o \
	xfer/resume.o xfer/meter.o xfer/budget.o xfer/stripe.o xfer/wire.o \
	xfer/done.o xfer/file.o xfer/data.o xfer/walk.o xfer/engine.o \
	xfer/hashalg.o
# The layers' shared headers (OpenSSH's .depend knows only its own files):
# a change in one rebuilds every layer.
$(HPN_SFTP_OBJS): xfer/xfer.h hpn-sftp-xfer.h hpn.h
