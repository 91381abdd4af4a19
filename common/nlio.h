/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nlio: the netlink plumbing every module shares: the socket, sequence
 * numbers, and the loop that sends one request and reads its replies up to
 * the ACK or the end of a dump. link, pf and rdma only build requests and
 * parse replies (with their attribute tables); none opens a socket or
 * reads one.
 *
 * Which library serves where:
 *  - libnl-route-3 for address, route and rule *objects*: it encodes a
 *    change as a request (rtnl_*_build_*_request) and decodes replies into
 *    objects (nl_msg_parse, nl_cache_parse_and_add). It never owns a socket
 *    here: its messages travel through nlio like any other.
 *  - libmnl for links (alternative names, the shaped netns move, IPoIB's
 *    20-byte addresses, one request per read or change), the PF's VF
 *    requests and RDMA netlink. Its socket is the socket.
 * Why libmnl's socket and not libnl's: libnl's receive loop checks
 * sequence numbers against a counter of its own that a request sent beside
 * it on its fd would put out of step, and it hides the ACK's extended
 * error text, the message sizes and the count of requests. One loop of our
 * own serves both kinds, counts every request the same way, and keeps one
 * rtnetlink socket per namespace per process instead of two or three.
 *
 * Sockets are shared: nlio_open hands out the socket of that protocol the
 * process already holds in the current namespace (counting references),
 * so link's host socket and the PF's requests ride one. The namespace is
 * told by the inode of /proc/self/ns/net, which cannot be reused while our
 * socket holds the namespace alive. The process is single-threaded and
 * every request runs to its end before the next: sharing needs no lock.
 */
#ifndef NLIO_H
#define NLIO_H

#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

struct nlio;

/* A socket of protocol (NETLINK_ROUTE, NETLINK_RDMA) in the current namespace: 0 or -errno. */
int nlio_open(int protocol, struct nlio **s);
/* The same in the namespace of netns_fd; the process returns to its own namespace. */
int nlio_open_in(int protocol, int netns_fd, struct nlio **s);
/* The socket's descriptor, for ioctls that any socket of its namespace serves (SIOCETHTOOL). */
int nlio_fd(const struct nlio *s);
/* Drop one reference; the socket closes with the last. NULL is a no-op. */
void nlio_close(struct nlio *s);

/*
 * Send req (its sequence number set, NLM_F_ACK added) and run cb (may be
 * NULL) over every reply up to the ACK or NLMSG_DONE. Replies are sized
 * before they are read, so a PF listing many VFs is never truncated;
 * EINTR is retried; ENOBUFS (replies lost) fails; replies left over from an
 * earlier request that ended early are dropped. 0, or -errno: the
 * kernel's error (its extended ACK text, when it gives one, is logged at
 * debug level), a callback's, or -EPROTO.
 */
int nlio_talk(struct nlio *s, struct nlmsghdr *req, mnl_cb_t cb, void *data);

/*
 * Decode len bytes of replies to request seq (0: any) from portid (0:
 * any), as nlio_talk does for each datagram: cb for every message of a
 * type of the family, NLMSG_ERROR as the ACK or an error, NLMSG_DONE
 * (with the error a failed dump carries) as the end. 0 when the reply is
 * complete, 1 when more is expected, -errno. For recorded replies and for
 * stand-ins that build replies as the kernel does.
 */
int nlio_run(const void *buf, size_t len, uint32_t seq, uint32_t portid, mnl_cb_t cb,
	     void *data);

#endif
