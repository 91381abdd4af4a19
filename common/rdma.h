/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rdma: RDMA devices through RDMA netlink (libmnl).
 *
 * RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV) answers for the network
 * namespace of the socket, and a move additionally requires the calling
 * process to be in the device's namespace: to act on a device that sits in a
 * pod, enter the pod's namespace, open the socket there, and call the setter
 * while still inside. A kernel built without CONFIG_INFINIBAND cannot open
 * the socket at all: every call that needs one returns -EPROTONOSUPPORT, and
 * nothing else does, so a caller can say "this kernel has no RDMA support"
 * exactly when that is true.
 *
 * Requests are encoded by the rdma_req_* functions and replies decoded by
 * rdma_parse_*: both work on plain buffers, so recorded kernel replies and
 * expected request bytes can be checked without a kernel.
 *
 * The requests travel through a backend: the kernel's NETLINK_RDMA socket,
 * unless a test build of the plugins registers a stand-in (test/fakes/)
 * with rdma_set_backend. Either way the same encoders and decoders run.
 */
#ifndef RDMA_H
#define RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <net/if.h>
#include <linux/netlink.h>

#define RDMA_NAME_MAX	64		/* IB_DEVICE_NAME_MAX, with the NUL */
#define RDMA_REQ_BUF	256		/* enough for any request built here */

struct rdma_dev {
	uint32_t index;			/* stable across renames and moves */
	char name[RDMA_NAME_MAX];
	uint32_t ports;			/* number of ports */
	uint8_t node_type;		/* RDMA_NODE_* (RDMA_NODE_IB_CA for mlx5 and rxe) */
	uint64_t node_guid;
	char protocol[16];		/* "roce", "ib", "iw"...; "" when not reported */
};

struct rdma_port {
	uint32_t dev_index;
	char dev_name[RDMA_NAME_MAX];
	uint32_t port;			/* from 1, as in sysfs */
	uint32_t ndev_index;		/* 0: no netdev in the socket's namespace */
	char ndev_name[IFNAMSIZ];
	uint8_t state;			/* IB_PORT_* (4: active) */
	uint8_t phys_state;
};

struct rdma_sock;

/*
 * Where the requests of the sockets opened from now on go. xfer takes one
 * request (encoded by rdma_req_*) and runs cb over every reply up to the
 * ACK or the end of a dump, as nlio_talk does: 0 or -errno. open runs in
 * the namespace the socket is for.
 */
struct rdma_backend {
	int (*open)(void **priv);
	int (*xfer)(void *priv, struct nlmsghdr *req,
		    int (*cb)(const struct nlmsghdr *nlh, void *data), void *data);
	void (*close)(void *priv);
};
/* NULL: the kernel (the default, and all that the default build ever uses). */
void rdma_set_backend(const struct rdma_backend *b);

/* In the current namespace: -EPROTONOSUPPORT when the kernel has no RDMA. */
int rdma_sock_open(struct rdma_sock **s);
void rdma_sock_close(struct rdma_sock *s);

/* Netns mode of the RDMA subsystem (ib_core netns_mode: 0 exclusive, 1 shared). */
int rdma_sys_get_netns_mode(struct rdma_sock *s, bool *exclusive);

/* fn is called once per device, in the kernel's order; a non-zero return is kept and returned. */
typedef int (*rdma_dev_fn)(const struct rdma_dev *dev, void *data);
int rdma_dev_dump(struct rdma_sock *s, rdma_dev_fn fn, void *data);
/* -ENODEV when no device of that index/name is visible from the socket's namespace. */
int rdma_dev_get_by_index(struct rdma_sock *s, uint32_t index, struct rdma_dev *dev);
int rdma_dev_get_by_name(struct rdma_sock *s, const char *name, struct rdma_dev *dev);
/* The ports of one device (RDMA_NLDEV_CMD_PORT_GET dump). */
typedef int (*rdma_port_fn)(const struct rdma_port *port, void *data);
int rdma_port_dump(struct rdma_sock *s, uint32_t dev_index, rdma_port_fn fn, void *data);
/*
 * The first port whose netdev is ifindex (when > 0) or ifname (when not
 * NULL): -ENODEV when none. The kernel reports a port's netdev only to a
 * socket in the netdev's namespace, so ask from there.
 */
int rdma_dev_find_by_netdev(struct rdma_sock *s, int ifindex, const char *ifname,
			    struct rdma_port *port);

/*
 * Move the device to the namespace of netns_fd. -EOPNOTSUPP when the
 * kernel is in shared mode or the driver cannot be moved (it needs
 * disassociate_ucontext: mlx5 can, rxe cannot); -ENODEV when the calling
 * process is not in the device's namespace.
 */
int rdma_dev_set_netns(struct rdma_sock *s, uint32_t index, int netns_fd);
/* -EINVAL for a name rdma_dev_name_valid() refuses, -EEXIST when taken; the same name is a no-op. */
int rdma_dev_rename(struct rdma_sock *s, uint32_t index, const char *name);
/* 1..63 bytes of [A-Za-z0-9_.-], not "." or "..": what can name a sysfs directory. */
bool rdma_dev_name_valid(const char *name);

/* ---- encoding and decoding, on buffers ---- */

/* Each builds one request in buf (RDMA_REQ_BUF bytes); NULL only for an invalid rename. */
struct nlmsghdr *rdma_req_sys_get(void *buf, uint32_t seq);
struct nlmsghdr *rdma_req_sys_set(void *buf, uint32_t seq, bool exclusive);
struct nlmsghdr *rdma_req_dev_get(void *buf, uint32_t seq, uint32_t index);
struct nlmsghdr *rdma_req_dev_dump(void *buf, uint32_t seq);
struct nlmsghdr *rdma_req_port_dump(void *buf, uint32_t seq, uint32_t dev_index);
struct nlmsghdr *rdma_req_dev_set_netns(void *buf, uint32_t seq, uint32_t index, int netns_fd);
struct nlmsghdr *rdma_req_dev_rename(void *buf, uint32_t seq, uint32_t index, const char *name);

/*
 * Decode len bytes of replies to request seq (0: any). Return 0 when the
 * reply is complete (NLMSG_DONE or the ACK seen), 1 when more is expected,
 * -errno for an error the kernel sent (including a dump's NLMSG_DONE
 * carrying one) or -EPROTO for a malformed message.
 */
int rdma_parse_sys(const void *buf, size_t len, uint32_t seq, bool *exclusive);
int rdma_parse_devs(const void *buf, size_t len, uint32_t seq, rdma_dev_fn fn, void *data);
int rdma_parse_ports(const void *buf, size_t len, uint32_t seq, rdma_port_fn fn, void *data);

#endif
