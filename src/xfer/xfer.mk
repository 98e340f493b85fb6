# HPN patch set: the SFTP transfer engine's layers (src/xfer/; its map is
# in HACKING.md), linked into scp and sftp.  Included by Makefile.in
# (hpn-sftp-tree.patch): a layer added here needs no patch.
HPN_SFTP_OBJS=xfer/proto.o xfer/conn.o xfer/early.o xfer/lanes.o \
	xfer/resume.o xfer/meter.o xfer/budget.o xfer/stripe.o xfer/wire.o \
	xfer/done.o xfer/file.o xfer/data.o xfer/walk.o xfer/engine.o \
	xfer/hashalg.o

# As upstream's objects are (LIBSSH_OBJS, SSHOBJS): made again when
# config.h changes, which scripts/build.sh touches when a header of ours
# does (these include xfer.h; scp's and sftp's other objects are not
# listed upstream, so a changed struct hpn_sftp left them stale).  This
# file comes before Makefile.in's first rule: the default goal is cleared
# after it, so that the next rule ("all") stays the default.
$(HPN_SFTP_OBJS) hpn-scp-zproto.o hpn-scp-resume.o scp.o sftp.o \
    sftp-client.o sftp-glob.o sftp-usergroup.o progressmeter.o: \
    Makefile.in config.h
.DEFAULT_GOAL :=
