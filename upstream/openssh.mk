# The upstream OpenSSH release this patch set applies to.  Read by the
# top-level Makefile and by scripts/*.sh (plain KEY=value lines only).
# Rebasing onto a new release: change these lines, then refresh patches/
# (HACKING.md, "Rebasing"; SECURITY.md, "Moving to the next release").
OPENSSH_VERSION=10.3p1
# The pristine release tarball (openssh-10.3p1.tar.gz as released upstream,
# which Debian's archive carries byte for byte as openssh_10.3p1.orig.tar.gz).
OPENSSH_SHA256=56682a36bb92dcf4b4f016fd8ec8e74059b79a8de25c15d670d731e7d18e45f4
OPENSSH_SIZE=2007369
# Debian suites whose source indexes list that .orig tarball; tried in order.
# Only the tarball is fetched (through apt's own transport and the machine's
# configured Debian archive), never Debian's patches.
DEBIAN_SUITES="trixie-backports sid"
