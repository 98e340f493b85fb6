# The upstream OpenSSH release this patch set applies to.  Read by the
# top-level Makefile and by scripts/*.sh (plain KEY=value lines only).
# Rebasing onto a new release: change these lines, then refresh patches/.
OPENSSH_VERSION=10.0p1
OPENSSH_SHA256=021a2e709a0edf4250b1256bd5a9e500411a90dddabea830ed59cef90eb9d85c
# Debian source package that carries this exact tarball as its .orig
# (and the security fixes applied on top of it).
DEBIAN_SOURCE=openssh/trixie
