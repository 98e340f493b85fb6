/*
 * HPN patch set: for harnesses that compile packet.c in (window, none).
 *
 * A connection freed in whatever state the peer left it: closed by
 * ssh_packet_disconnect() (no state left), its keys cleared by
 * sshpkt_fatal() (ssh_packet_clear_keys(): the buffers gone, the
 * descriptor, addresses, state and kex still there), or whole.
 */
#ifndef HPN_FUZZ_PACKET_H
#define HPN_FUZZ_PACKET_H

static void
fz_connection_free(struct ssh *ssh)
{
	struct session_state *state;

	if (ssh == NULL)
		return;
	if ((state = ssh->state) == NULL) {
		free(ssh);
		return;
	}
	if (state->initialized) {
		ssh_packet_free(ssh);
		return;
	}
	/* ssh_packet_close_internal()'s closing half */
	close(state->connection_in);
	if (state->connection_out != state->connection_in)
		close(state->connection_out);
	free(ssh->local_ipaddr);
	free(ssh->remote_ipaddr);
	free(state);
	kex_free(ssh->kex);
	freezero(ssh, sizeof(*ssh));
}

#endif /* HPN_FUZZ_PACKET_H */
