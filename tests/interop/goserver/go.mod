module hpn-patch-set.invalid/goserver

go 1.19

require golang.org/x/crypto v0.17.0
