// goserver: a Go x/crypto/ssh server for tests/regress/hpn-early.sh.
//
//	goserver -addr 127.0.0.1:PORT -hostkey FILE -authorized FILE -ready FILE
//
// Public-key authentication with the one key in -authorized (any user
// name); "session" channels whose "exec" request runs the command with
// /bin/sh -c, its stdin and stdout the channel's, and sends its exit
// status.  Writes its PID to -ready once listening; runs until killed, at
// most 20 minutes.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"time"

	"golang.org/x/crypto/ssh"
)

func main() {
	addr := flag.String("addr", "", "listen address")
	hostkey := flag.String("hostkey", "", "host key file")
	authorized := flag.String("authorized", "", "the one public key allowed")
	ready := flag.String("ready", "", "written once listening")
	flag.Parse()
	time.AfterFunc(20*time.Minute, func() { os.Exit(2) })

	kb, err := os.ReadFile(*hostkey)
	if err != nil {
		log.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(kb)
	if err != nil {
		log.Fatal(err)
	}
	ab, err := os.ReadFile(*authorized)
	if err != nil {
		log.Fatal(err)
	}
	allowed, _, _, _, err := ssh.ParseAuthorizedKey(ab)
	if err != nil {
		log.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if bytes.Equal(k.Marshal(), allowed.Marshal()) {
				return nil, nil
			}
			return nil, fmt.Errorf("key refused")
		},
	}
	cfg.AddHostKey(signer)
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*ready+".tmp", []byte(fmt.Sprintf("%d\n", os.Getpid())), 0644); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(*ready+".tmp", *ready); err != nil {
		log.Fatal(err)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, cfg)
	}
}

func serve(c net.Conn, cfg *ssh.ServerConfig) {
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		log.Printf("handshake: %v", err)
		return
	}
	log.Printf("authenticated; client %s", conn.ClientVersion())
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go session(ch, creqs)
	}
}

func session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for r := range reqs {
		if r.Type != "exec" || len(r.Payload) < 4 {
			r.Reply(false, nil)
			continue
		}
		n := binary.BigEndian.Uint32(r.Payload)
		if int(n) > len(r.Payload)-4 {
			r.Reply(false, nil)
			continue
		}
		r.Reply(true, nil)
		cmd := exec.Command("/bin/sh", "-c", string(r.Payload[4:4+n]))
		cmd.Stdout = ch
		cmd.Stderr = ch.Stderr()
		in, _ := cmd.StdinPipe()
		st := 0
		if err := cmd.Start(); err != nil {
			st = 127
		} else {
			go func() { io.Copy(in, ch); in.Close() }()
			if err := cmd.Wait(); err != nil {
				st = 1
				if e, ok := err.(*exec.ExitError); ok {
					st = e.ExitCode()
				}
			}
		}
		b := make([]byte, 4)
		binary.BigEndian.PutUint32(b, uint32(st))
		ch.SendRequest("exit-status", false, b)
		return
	}
}
