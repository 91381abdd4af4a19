/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sriov-rdma: the plugin's own declarations, shared by its commands.
 *
 * netconf.c parses and validates the configuration (nothing on the host is
 * touched before it succeeds), record.c keeps the attachment record,
 * devinfo.c the device-info file, vfnet.c moves the VF netdev between namespaces,
 * rdmadev.c its RDMA device, ib.c what every command knows of an
 * InfiniBand VF (its settings, GUIDs kept and put back), rail.c sets up
 * multiRail's policy routing and sysctls, and release.c (release.h) undoes
 * one recorded attachment. add.c (its steps in add_*.c, declared in
 * add.h), del.c, check.c and gc.c implement the commands on top of them;
 * none calls into another's files (test/unit/call_cycles.sh).
 */
#ifndef SRIOV_H
#define SRIOV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "claim.h"
#include "cni.h"
#include "cni_delegate.h"
#include "link.h"
#include "pf.h"
#include "rdma.h"
#include "state.h"
#include "sysctl.h"
#include "timing.h"
#include "vf.h"

#define SRIOV_DEFAULT_STATE_DIR	"/var/lib/cni/sriov-rdma"
#define SRIOV_DEFAULT_SYSFS	"/sys"
/* Test hook: a sysfs tree modelling the NIC. */
#define SRIOV_ENV_SYSFS_ROOT	"SRIOV_RDMA_SYSFS_ROOT"
/* How long an ADD or DEL waits for another one holding the same VF. */
#define SRIOV_LOCK_TIMEOUT_MS	30000
#define SRIOV_PCI_SUBDIR	"pci"
/* How long ADD waits for the kernel to put the pod's address into the GID table. */
#define SRIOV_GID_WAIT_MS	2000

/* The pod's sysctls: "sysctl" entries of the config, at most this many. */
#define SRIOV_MAX_SYSCTLS	32
/* Test hook: a proc tree standing in for /proc (sysctls). */
#define SRIOV_ENV_PROC_ROOT	"SRIOV_RDMA_PROC_ROOT"
/*
 * How many gratuitous ARPs (one a second, the neighbour timer's) an address
 * gets when its VF arrives in the pod without carrier: the window a late
 * carrier has to catch one of them.
 */
#define SRIOV_LATE_CARRIER_PROBES	15
/* The largest device-info document taken over from the device plugin or written. */
#define SRIOV_DEVINFO_MAX	2048
/* A pod's namespace, name or UID as the record keeps it (a DNS subdomain is 253). */
#define SRIOV_POD_FIELD_MAX	254
/* The largest IPAM config a record keeps for the release of a takeover. */
#define SRIOV_IPAM_CONF_MAX	65536
/* sbr's choice: policy routing tables are taken from here up. */
#define SRIOV_FIRST_ROUTE_TABLE	100

struct sriov_sysctl {
	const char *name;		/* "net.ipv4.conf.net1.arp_ignore" */
	const char *value;
};

/* The config's "rdma". */
enum sriov_rdma_mode {
	SRIOV_RDMA_AUTO = 0,
	SRIOV_RDMA_EXCLUSIVE,
	SRIOV_RDMA_OFF,
};

/*
 * ib.c: an InfiniBand VF's settings. The link layer comes from the VF
 * (add_ib_validate), never from the config; the rest from the config.
 */
struct sriov_ib_conf {
	const char *guid_field;		/* "runtimeConfig.infinibandGUID" or "guid"; NULL: none */
	bool guid_auto;			/* "guid": "auto" */
	uint64_t guid;
	bool has_pkey;
	uint16_t pkey;
	bool k8s;			/* ibKubernetesEnabled */
	const char *eth_key;		/* the first Ethernet-only setting given, NULL: none */
	const char *ib_key;		/* the first InfiniBand-only setting given, NULL: none */
	bool is_ib;			/* the VF's link layer, once validated */
};

/* What ADD changes on an InfiniBand VF, for DEL. */
struct sriov_ib_rec {
	bool ib;			/* the VF is InfiniBand (IPoIB netdev) */
	bool guid_set;			/* ADD sets GUIDs (or may have): DEL puts orig back, rebinds */
	struct pf_vf_guids orig;	/* before ADD */
	struct pf_vf_guids applied;
	char driver[64];		/* the VF's driver, to bind it again after an unbind */
	bool has_pkey;
	uint16_t pkey;
};

/* Test hook: how long a VF rebind may take (udev included), default SRIOV_IB_REBIND_MS. */
#define SRIOV_ENV_REBIND_MS	"SRIOV_RDMA_REBIND_WAIT_MS"
#define SRIOV_IB_REBIND_MS	30000

/* Where the plugin reads the host from: the real one, or a test stand-in. */
struct sriov_paths {
	const char *sysfs_root;
	const char *proc_root;		/* sysctls */
};

struct sriov_conf {
	char bdf[VF_BDF_LEN];
	struct pf_vf_config vf;		/* only the fields the config asks for */
	bool has_mac;			/* effective MAC for the pod netdev */
	uint8_t mac[6];
	int mtu;			/* 0: keep the VF's */
	enum sriov_rdma_mode rdma;
	const char *rdma_name;		/* rdmaName + the VF's suffix, NULL: keep the kernel's name */
	char rdma_name_buf[RDMA_NAME_MAX];
	char state_dir[PATH_MAX];	/* resolved through the node policy */
	struct sriov_paths paths;
	const char *devinfo_file;	/* runtimeConfig.CNIDeviceInfoFile, resolved, or NULL */
	char devinfo_buf[PATH_MAX];
	const char *ipam_type;		/* NULL: no IPAM */
	/* rail.c: multi-rail settings and the pod's sysctls. */
	bool multi_rail;
	uint32_t route_table;		/* routeTable, 0: the first free from 100 */
	int n_sysctls;
	struct sriov_sysctl sysctls[SRIOV_MAX_SYSCTLS];
	struct sriov_ib_conf ib;
};

/* What ADD's rail steps changed in the pod, for their undo. */
struct sriov_rail {
	int n_saved;			/* namespace-wide values overwritten, oldest first */
	char saved_name[SRIOV_MAX_SYSCTLS + 1][128];
	char saved_value[SRIOV_MAX_SYSCTLS + 1][64];
	bool held_down;			/* the netdev arrived down, for the sysctls */
	uint32_t table;			/* 0: no policy routing */
	int n_rules;
	char rules[CNI_MAX_IPS][64];	/* the addresses given a rule */
};

/* multiRail's per-interface sysctls (five) and the pod's all.rp_filter. */
#define SRIOV_RAIL_SYSCTLS	6
/* The routes ADD puts into a rail's table (each once, however many addresses share it). */
#define SRIOV_MAX_RAIL_ROUTES	CNI_MAX_ROUTES

/*
 * What multiRail made in the pod, as CHECK verifies it: the "from" rule of
 * every recorded address to table, the table's routes, the sysctls' values
 * as ADD left them. Records written before CHECK verified these lack it.
 */
struct sriov_rail_made {
	bool known;			/* false: no multiRail, or an older record */
	uint32_t table;			/* 0: no policy routing (no address) */
	int n_routes;
	struct link_route routes[SRIOV_MAX_RAIL_ROUTES];
	int n_sysctls;
	char sysctl_name[SRIOV_RAIL_SYSCTLS][SYSCTL_NAME_MAX + 1];
	char sysctl_value[SRIOV_RAIL_SYSCTLS][SYSCTL_VALUE_MAX + 1];
};

/*
 * What an ADD changed, enough for DEL, CHECK and GC to undo or verify it
 * without the configuration (which may have changed since). While ADD
 * runs (in_progress) it says what ADD is about to change: every step that
 * changes the host is declared in it before the first one runs, and DEL
 * undoing a step that never ran finds nothing to change (the VF settings
 * are the ones read under the same lock, the devices are looked for by
 * identity wherever they are).
 */
struct sriov_record {
	/* What the file said of its writer (docs/upgrading.md); a write says this release's. */
	struct state_version written;
	bool in_progress;		/* ADD has not finished (or was killed) */
	/* The network's name (conf.name): a GC collects its own only. "" in an older record. */
	char network[256];
	/* The IPAM ADD delegated to (ipam.type): DEL's, whatever the config says by then. */
	char ipam_type[256];
	char container_id[256];
	char ifname[IFNAMSIZ];
	char netns[4096];
	/*
	 * The namespace netns named at ADD: a path naming another one by
	 * then (a runtime's path reused) is not this attachment's. Unknown
	 * in older records, which go by the path.
	 */
	struct netns_id netns_id;
	char bdf[VF_BDF_LEN];
	char pf_bdf[VF_BDF_LEN];
	char pf_netdev[IFNAMSIZ];
	int vf_index;
	bool dpdk;
	char host_ifname[IFNAMSIZ];	/* the VF netdev's name on the host */
	uint8_t host_mac[6];
	int host_mtu;
	bool host_up;
	uint8_t pod_mac[6];
	int pod_mtu;
	struct pf_vf_config vf_applied;	/* what was set on the PF */
	struct pf_vf_config vf_orig;	/* the same fields before */
	char rdma_dev[RDMA_NAME_MAX];	/* the RDMA device's host name, "" when none was handled */
	uint32_t rdma_index;		/* stable across moves and renames */
	char rdma_pod_name[RDMA_NAME_MAX];	/* the name the pod sees */
	bool rdma_moved;		/* into the pod (exclusive mode), or about to */
	bool rdma_renamed;		/* to rdmaName, inside the pod */
	char devinfo_file[4096];	/* "" when ADD writes none */
	char devinfo_text[SRIOV_DEVINFO_MAX];	/* what ADD wrote there, "" in an older version's record */
	int n_addrs;
	char addrs[CNI_MAX_IPS][64];
	struct sriov_rail_made rail;
	/* ADD adds no policy rules (no multiRail): DEL need not look for any. false in older records. */
	bool no_rules;
	struct sriov_ib_rec ib;
	/*
	 * The pod, from CNI_ARGS (K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_UID):
	 * "" when the runtime sent none, and in older records. A takeover of a
	 * forgotten sandbox needs the same UID on both sides.
	 */
	char pod_namespace[SRIOV_POD_FIELD_MAX];
	char pod_name[SRIOV_POD_FIELD_MAX];
	char pod_uid[SRIOV_POD_FIELD_MAX];
	/*
	 * The IPAM's config as ADD delegated to it, {cniVersion, name, ipam},
	 * so that whoever undoes the attachment without its runtime (a
	 * takeover, rdma-doctor's command) releases its address: "" without an
	 * IPAM, in older records, or when larger than SRIOV_IPAM_CONF_MAX.
	 */
	char ipam_conf[SRIOV_IPAM_CONF_MAX];
};

/* netconf.c */
/* rdmaName's longest prefix: "_d65535p255s31f7" must still fit in 63. */
#define SRIOV_RDMA_NAME_PREFIX_MAX	46
void sriov_rdma_pod_name(const char *prefix, const char *bdf, char out[RDMA_NAME_MAX]);
int sriov_conf_parse(const struct cni_request *req, struct sriov_conf *conf,
		     struct cni_error *err);
/* The "ipam" of the config, for delegation; NULL when there is none. */
const char *sriov_ipam_type(const struct cni_request *req);
/*
 * For DEL and GC, which must release what ADD reserved: the same, else the
 * type of an "ipam" spelled in another case (logged), which an older ADD
 * took and this one refuses.
 */
const char *sriov_ipam_type_to_release(const struct cni_request *req);
/*
 * The IPAM of this type may run while the VF moves (it never looks into the
 * pod's namespace): ADD and DEL start it first and collect its answer after
 * the moves, which wait mostly on the kernel's RCU grace periods.
 */
bool sriov_ipam_overlaps(const char *type);
/*
 * stateDir alone (DEL, GC and STATUS must work with a partial config),
 * resolved through the node policy into dir (PATH_MAX fits any).
 */
int sriov_state_dir(const struct cni_request *req, char *dir, size_t size, struct cni_error *err);
/* SRIOV_RDMA_SYSFS_ROOT (default /sys). */
int sriov_env_paths(struct sriov_paths *paths, struct cni_error *err);
/* The same for DEL and GC: a hook that fails validation is logged and ignored. */
void sriov_env_paths_lenient(struct sriov_paths *paths);
/*
 * The config's VF (deviceID, pciBusID, runtimeConfig.deviceID, which must
 * agree) alone: DEL's fallback. -EXDEV when they disagree, bdf then the
 * first of them.
 */
int sriov_device_id(const struct cni_request *req, char bdf[VF_BDF_LEN], struct cni_error *err);
/* "rdma" alone (STATUS must work without a deviceID). */
int sriov_rdma_mode(const struct cni_request *req, enum sriov_rdma_mode *mode,
		    struct cni_error *err);
/* logLevel and logFile. */
int sriov_log_setup(const struct cni_request *req, struct cni_error *err);

/* rail.c */
/* multiRail, routeTable, sysctl and the proc root (code 7 naming the key). */
int sriov_rail_parse(const struct cni_request *req, struct sriov_conf *conf,
		     struct cni_error *err);
/* Does the netdev have to arrive down, so sysctls are set before it comes up? */
bool sriov_rail_hold_down(const struct sriov_conf *conf);
/*
 * Called from inside the pod's namespace (the caller enters it once for
 * all the pod's sysctls), on ifname (ifindex there, pod_ls the pod's
 * socket), before link-up: the multi-rail ARP and reverse-path settings,
 * then the config's sysctls, then the link up if it was held down.
 */
int sriov_rail_sysctls(const struct sriov_conf *conf, struct link_sock *pod_ls,
		       const char *ifname, int ifindex, struct sriov_rail *st,
		       struct cni_error *err);
/* multiRail: the values of its sysctls on ifname once sriov_rail_sysctls is done, into made. */
void sriov_rail_sysctls_made(const struct sriov_conf *conf, const char *ifname,
			     struct sriov_rail_made *made);
/* From inside the pod: put back the namespace-wide values sriov_rail_sysctls overwrote. */
void sriov_rail_sysctls_undo(const struct sriov_conf *conf, struct sriov_rail *st);
/*
 * multiRail: a table for ifname (ifindex) and a "from" rule per address of
 * ipam; the table and its routes go into made.
 */
int sriov_rail_routing(const struct sriov_conf *conf, struct link_sock *pod_ls,
		       const char *ifname, int ifindex, const struct cni_result *ipam,
		       struct sriov_rail *st, struct sriov_rail_made *made,
		       struct cni_error *err);
void sriov_rail_routing_undo(struct link_sock *pod_ls, struct sriov_rail *st);
/*
 * DEL, once the netdev has left the pod (pod_ls NULL: the pod is gone): the
 * "from" rules of the recorded addresses, which outlive the netdev and its
 * table's routes. Best effort: never fails.
 */
void sriov_rail_release(const struct sriov_record *rec, struct link_sock *pod_ls);
/*
 * CHECK: rec's rules, table routes and sysctls (rec->rail) still as ADD left
 * them, on ifindex of the pod (pod_fd, pod_ls a socket there): one rule dump,
 * one route dump, one visit for the sysctls. Code 107 naming what drifted.
 * multi_rail is the config's: a record older than rec->rail is then skipped.
 */
int sriov_rail_check(const struct sriov_record *rec, bool multi_rail, const char *proc_root,
		     struct link_sock *pod_ls, int pod_fd, int ifindex, const char *netns,
		     struct cni_error *err);

/* record.c */
/* The newest attachment record this version reads (docs/upgrading.md). */
#define SRIOV_RECORD_VERSION	1
/* "vlan 0, vlanQoS 0, vlanProto 802.1q; trust off": the config's words for mask's fields. */
void sriov_vf_fields_format(unsigned mask, const struct pf_vf_config *v, char *buf, size_t len);
void sriov_record_name(const char *container_id, const char *ifname, char *out, size_t len);
int sriov_record_write(int dirfd, const struct sriov_record *rec);
/*
 * -ENOENT when absent, -EBADMSG when unreadable (garbled, out of range, not
 * a file), -EPROTO when a newer release wrote it in a version this one does
 * not read (rec->written says which; nothing else of rec is filled).
 */
int sriov_record_read(int dirfd, const char *name, struct sriov_record *rec);
/* The same from a sealed buffer (modified in place): the parser the fuzz target drives. */
int sriov_record_parse(char *buf, size_t len, struct sriov_record *rec);
int sriov_record_remove(int dirfd, const struct sriov_record *rec);
/*
 * The refusal of a record of a newer release (sriov_record_read gave
 * -EPROTO): code 11, naming the record, who wrote it and what to run;
 * what: the command's words for what it leaves ("nothing was changed").
 */
int sriov_record_newer(const struct sriov_record *rec, const char *state_dir, const char *name,
		       const char *what, struct cni_error *err);
/* A pod's namespace, name or UID fit for the record: [A-Za-z0-9._-], 1 to 253 characters. */
bool sriov_pod_field_ok(const char *s);

/* devinfo.c */
/* Absolute, no "..": code 7 naming runtimeConfig.CNIDeviceInfoFile. */
int sriov_devinfo_validate(const char *path, char resolved[PATH_MAX], struct cni_error *err);
/*
 * What stands at the device-info path before ADD: nothing (text NULL), or
 * the device plugin's document for this VF, which Multus copies there
 * before it calls the plugin (text, as read, and the file's mode).
 */
struct sriov_devinfo_prior {
	char *text;
	size_t len;
	mode_t mode;
};
/*
 * Look at path, changing nothing. 0: free, or the device plugin's copy for
 * VF bdf (prior filled; the caller frees prior->text). Else what stands
 * there is someone else's: -ELOOP a symlink, -EINVAL not a regular file
 * (a directory, a FIFO), -EFBIG too large, -EBADMSG not a device-info
 * document of type "pci" naming a PCI address, -EXDEV one naming another
 * device (its address in other).
 */
int sriov_devinfo_inspect(const char *path, const char *bdf, struct sriov_devinfo_prior *prior,
			  char *other, size_t other_len);
/*
 * The device-info file's text for VF bdf (rdma_dev NULL or "": none), built
 * on base when it is the device plugin's copy (NULL: from nothing): its
 * members are kept, the PCI addresses, the pod-side rdma-device and for an
 * InfiniBand VF (ib->ib) an "infiniband" object set: its pkey when the
 * config gives one, the node and port GUID the VF runs with.
 */
int sriov_devinfo_text(const char *base, const char *bdf, const char *pf_bdf,
		       const char *rdma_dev, const struct sriov_ib_rec *ib, char *out, size_t len);
/*
 * Put text at path. With no prior text, only where no file stands
 * (-EEXIST: it stays as it is); with one, in place of the file only while
 * it still holds the prior text (-EEXIST otherwise), renamed over it.
 */
int sriov_devinfo_write(const char *path, const char *text, const struct sriov_devinfo_prior *prior);
/*
 * Undo a write: only if path holds exactly text (what ADD recorded
 * writing), remove it, or with a prior text put that back; with text ""
 * (an older record), remove it only if it names VF bdf. -EPERM: left.
 */
int sriov_devinfo_remove(const char *path, const char *text, const char *bdf,
			 const struct sriov_devinfo_prior *prior);

/* vfnet.c */
/*
 * Is link li (in the namespace of ls) the VF bdf? 1 when the PCI device
 * under it is bdf; -EXDEV when it is lo, a link with no device (a veth,
 * macvlan or ipvlan a pod made, whatever its name), a device on another
 * bus or another PCI device (*what says which); -errno when it cannot be
 * asked. Only the device tells: never the name.
 */
int sriov_link_is_vf(struct link_sock *ls, const struct link_info *li, const char *bdf,
		     char what[96]);
/*
 * The VF bdf in the pod (pod_ls, a socket there), by its PCI device: under
 * one of names (n_names of them, "" or NULL skipped; one request each),
 * else under any name (one dump of the pod's links: a pod with NET_ADMIN
 * may have renamed it, and given its name to a link of its own). 0 with
 * *li; -ENODEV when no link of the pod is the VF.
 */
int sriov_pod_find_vf(struct link_sock *pod_ls, const char *bdf, const char *const names[],
		      int n_names, struct link_info *li);
/*
 * The PF's netdev name now, found by its recorded PCI address (a PF renamed
 * since ADD, by udev after a driver reload or by an admin, is the same PF);
 * -ENODEV when its PCI device is gone. A record without the PF's address,
 * or a PF that has no netdev now, gives the recorded name.
 */
int sriov_pf_name(const struct sriov_record *rec, const char *sysfs_root, char name[IFNAMSIZ]);
/*
 * A failed return from the pod's namespace (netns_do) left this process
 * there: -1 with the error that ends the command, which must then do
 * nothing more; 0 when all is well.
 */
int sriov_stranded(struct cni_error *err);
/* The alternative names of a VF netdev that ADD drops (the first this many). */
#define SRIOV_MAX_ALTNAMES	16
/*
 * Move the host netdev `orig` into pod_fd (pod_ls: a socket opened there)
 * as `ifname`, which the caller found free, up (or down, for settings that
 * must precede link-up), with MAC and MTU when mac / mtu > 0 are given, its
 * altnames (read with orig) dropped; *pod_li is what the pod then sees. On
 * failure the netdev is back on the host as it was. -EEXIST: ifname is
 * taken in the pod.
 */
int sriov_netdev_to_pod(const struct link_info *orig, char altnames[][128], int n_altnames,
			int pod_fd, struct link_sock *pod_ls, const char *ifname,
			const uint8_t *mac, int mtu, bool up, struct link_info *pod_li);
/*
 * Bring the VF netdev home under its recorded name, MAC, MTU and up state,
 * wherever it is: in the pod (pod_ls, a socket opened there; NULL: the pod
 * is gone) as rec->ifname, or on the host under any name the sysfs tree
 * gives for its PCI address. *found is false when it is in neither
 * (already gone), which is not an error.
 */
int sriov_netdev_to_host(const struct sriov_record *rec, struct link_sock *pod_ls,
			 const char *sysfs_root, bool *found);
/* A route of a CNI result as link installs it. */
void sriov_route_link(const struct cni_route *in, struct link_route *out);
/* The same, as the spec means it: without "gw", via the IPAM's gateway (cni_route_resolve). */
void sriov_route_resolve(const struct cni_result *r, const struct cni_route *rt,
			 struct link_route *out);

/* rdmadev.c */
/*
 * Before ADD changes anything: decide what happens to the VF's RDMA device
 * under conf->rdma. *s gets the host socket when the device is to move
 * (rec->rdma_dev and rdma_index are then filled), rec->rdma_dev alone when it
 * stays visible in shared mode; neither when there is nothing to do.
 */
int sriov_rdma_plan(const struct sriov_conf *conf, const struct vf_dev *vf,
		    struct sriov_record *rec, struct rdma_sock **s, struct cni_error *err);
/* Move the planned device into pod_fd and rename it to conf->rdma_name there; undone on failure. */
int sriov_rdma_to_pod(const struct sriov_conf *conf, struct rdma_sock *host_s, int pod_fd,
		      const char *netns, struct sriov_record *rec, struct cni_error *err);
/*
 * Bring a moved device home under its host name: from pod_fd (-1: the pod is
 * gone, and the kernel has returned it already) and renamed back on the host.
 * A device that is nowhere to be seen is not an error.
 */
int sriov_rdma_to_host(const struct sriov_record *rec, int pod_fd);
/* CHECK: the moved device is in pod_fd under its recorded name (code 107 otherwise). */
int sriov_rdma_check(const struct sriov_record *rec, int pod_fd, const char *netns,
		     struct cni_error *err);
/*
 * From inside pod_fd, through libibverbs (what the workload uses): -ENODEV
 * when it does not list and open the device; then, for address (when not
 * NULL), the RoCE v2 GID index, -ENOENT when the table has none for it.
 */
int sriov_rdma_pod_view(const struct sriov_record *rec, int pod_fd, const char *address,
			int *gid_index);
/* STATUS: code 50 when mode is exclusive and the kernel cannot serve it. */
int sriov_rdma_status(enum sriov_rdma_mode mode, struct cni_error *err);

/* ib.c */
/* guid, runtimeConfig.infinibandGUID, pkey, ibKubernetesEnabled (code 7 naming the key). */
int sriov_ib_parse(const struct cni_request *req, struct sriov_conf *conf, struct cni_error *err);
/*
 * The VF's link layer is InfiniBand (*ib): from its netdev or RDMA port,
 * or from its PF's when the VF shows neither on the host (in a pod, or
 * left unbound by a killed ADD).
 */
int sriov_ib_link_is_ib(const char *sysfs_root, const struct vf_dev *vf, bool *ib);
/* The VF's PF, locked by its PCI address in pci_fd (-1: not locked); code 100 naming it. */
int sriov_ib_open_pf(const struct vf_dev *vf, int pci_fd, struct pf **pf, struct cni_error *err);
/* How long a rebind waits for the VF's netdev and RDMA device (SRIOV_ENV_REBIND_MS). */
int sriov_ib_rebind_ms(void);
/*
 * Under the VF's lock, before the record: the VF's GUIDs now, the ones
 * ADD is to set (a VF left with all-zero GUIDs is refused), into rec->ib.
 */
int sriov_ib_snapshot(const struct sriov_conf *conf, const struct vf_dev *vf, int pci_fd,
		      struct sriov_record *rec, struct cni_error *err);
/*
 * DEL and ADD's undo: the recorded original GUIDs back and the VF rebound
 * (pf_lock_dirfd -1: no PF lock). A PF or VF that is gone is skipped; a PF
 * refusing the GUIDs is an error; a rebind that does not settle is logged.
 * timing, if not NULL, gets the time waited for the PF's lock.
 */
int sriov_ib_restore(const struct sriov_record *rec, int pf_lock_dirfd, const char *sysfs_root,
		     struct timing *timing);
/*
 * DEL's fallback record for an InfiniBand VF: only its link state goes back
 * to the driver's default (IPoIB has no MAC, VLAN, spoof check, trust or
 * rate on its PF, and refuses them); its GUIDs are not known.
 */
void sriov_ib_fallback(const struct sriov_paths *paths, const struct vf_dev *vf,
		       struct sriov_record *rec);
/* CHECK: the PF still holds the GUIDs ADD set (code 107 otherwise). */
int sriov_ib_check(const struct sriov_record *rec, const char *sysfs_root, struct cni_error *err);

/* Commands. */
int sriov_cmd_add(struct cni_request *req, struct cni_result *res, struct cni_error *err);
int sriov_cmd_del(struct cni_request *req, struct cni_error *err);
int sriov_cmd_check(struct cni_request *req, struct cni_error *err);
int sriov_cmd_status(struct cni_request *req, struct cni_error *err);
int sriov_cmd_gc(struct cni_request *req, struct cni_error *err);

#endif
