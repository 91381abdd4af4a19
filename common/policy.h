/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy: where a NAD may make the plugins create, write, delete or read files.
 *
 * A NetworkAttachmentDefinition is tenant input, and the plugins run as
 * root: every path a config names (stateDir, ipam.dataDir, logFile,
 * ipam.logFile, runtimeConfig.CNIDeviceInfoFile, ipam.resolvConf) must lie
 * in one of the allowed directories of its kind. The built-ins are where the plugins and
 * Multus put things; a node admin widens them in a node-local file that
 * NADs cannot touch:
 *
 *   /etc/cni/sriov-rdma-cni.json   (SRIOV_RDMA_CNI_NODE_CONFIG overrides,
 *                                   set by whoever runs the runtime)
 *   { "allowedStateDirs": ["/data/cni/state"], "allowedDataDirs": [...],
 *     "allowedLogDirs": [...], "allowedDeviceInfoDirs": [...],
 *     "allowedResolvConfDirs": [...] }
 *
 * at most POLICY_MAX_DIRS each, absolute, and optionally "version": 1. A
 * key this version does not know is ignored; a file saying a higher
 * version is refused (docs/upgrading.md): what it narrows is nothing an
 * older reader may ignore. An allowed directory is resolved
 * through the system's symlinks (/var/run is /run on Debian); below it,
 * callers walk with O_NOFOLLOW, so a symlink inside a store is refused.
 */
#ifndef POLICY_H
#define POLICY_H

#include <limits.h>
#include <stddef.h>

#define POLICY_NODE_CONFIG	"/etc/cni/sriov-rdma-cni.json"
#define POLICY_NODE_CONFIG_ENV	"SRIOV_RDMA_CNI_NODE_CONFIG"
#define POLICY_MAX_DIRS		16
/* The newest node config this version reads (docs/upgrading.md). */
#define POLICY_VERSION		1

enum policy_dir {
	POLICY_STATE,		/* sriov-rdma stateDir */
	POLICY_DATA,		/* pool-ipam dataDir */
	POLICY_LOG,		/* logFile, ipam.logFile */
	POLICY_DEVINFO,		/* runtimeConfig.CNIDeviceInfoFile */
	POLICY_RESOLV,		/* ipam.resolvConf, read into the result */
	POLICY_N
};

/*
 * Map `path` (absolute, no "." or ".." components) to where it really is:
 * the allowed directory it is in, resolved, followed by the rest as
 * written. 0; -EPERM when no allowed directory holds it; -EINVAL when the
 * node config is unusable; -ENOMEM. On failure `why` says which, and what
 * would be allowed.
 */
int policy_resolve(enum policy_dir k, const char *path, char *out, size_t outlen, char *why,
		   size_t whylen);
/*
 * The same in two parts, for a caller that opens path below its allowed
 * directory: that directory, resolved, in dir, and *rest pointing into
 * path at what lies below it ("" for the directory itself).
 */
int policy_split(enum policy_dir k, const char *path, char dir[PATH_MAX], const char **rest,
		 char *why, size_t whylen);

#endif
