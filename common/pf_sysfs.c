/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pf, the driver's view in sysfs: the VF configuration file NVIDIA's OFED
 * ConnectX driver writes, for a VF the PF's IFLA_VFINFO_LIST leaves out
 * (see pf_get). No netlink here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include "file.h"
#include "pf.h"
#include "valid.h"

/* One "Key : value" line of the OFED config file into cfg; unknown keys are not ours. */
static int sysfs_config_line(const char *key, const char *val, struct pf_vf_config *cfg)
{
	char *end;
	long v;

	if (!strcmp(key, "MAC")) {
		if (valid_mac_parse(val, cfg->mac) < 0)
			return -EBADMSG;
		cfg->mask |= PF_VF_MAC;
	} else if (!strcmp(key, "VLAN") || !strcmp(key, "QoS") || !strcmp(key, "MinTxRate") ||
		   !strcmp(key, "MaxTxRate")) {
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno || end == val || v < 0 || v > (long)UINT32_MAX)
			return -EBADMSG;
		if (!strcmp(key, "VLAN")) {
			cfg->vlan = (int)v;
			cfg->mask |= PF_VF_VLAN;
		} else if (!strcmp(key, "QoS")) {
			cfg->qos = (int)v;
		} else if (!strcmp(key, "MinTxRate")) {
			cfg->min_tx_rate = (unsigned)v;
			cfg->mask |= PF_VF_RATE;
		} else {
			cfg->max_tx_rate = (unsigned)v;
			cfg->mask |= PF_VF_RATE;
		}
	} else if (!strcmp(key, "VLAN Proto")) {
		cfg->vlan_proto = !strcasecmp(val, "802.1ad") ? ETH_P_8021AD : ETH_P_8021Q;
	} else if (!strcmp(key, "SpoofCheck") || !strcmp(key, "Trust")) {
		bool on = !strcasecmp(val, "ON");

		if (!on && strcasecmp(val, "OFF"))
			return -EBADMSG;
		if (key[0] == 'S') {
			cfg->spoofchk = on;
			cfg->mask |= PF_VF_SPOOFCHK;
		} else {
			cfg->trust = on;
			cfg->mask |= PF_VF_TRUST;
		}
	} else if (!strcmp(key, "LinkState")) {
		if (!strcasecmp(val, "Follow") || !strcasecmp(val, "Auto"))
			cfg->link_state = IFLA_VF_LINK_STATE_AUTO;
		else if (!strcasecmp(val, "Up") || !strcasecmp(val, "Enable"))
			cfg->link_state = IFLA_VF_LINK_STATE_ENABLE;
		else if (!strcasecmp(val, "Down") || !strcasecmp(val, "Disable"))
			cfg->link_state = IFLA_VF_LINK_STATE_DISABLE;
		else
			return -EBADMSG;
		cfg->mask |= PF_VF_LINK_STATE;
	}
	return 0;
}

int pf_sysfs_config(const char *sysfs_root, const char *pf_bdf, int vf_index,
		    struct pf_vf_config *cfg)
{
	char path[PATH_MAX], text[4096], *line, *next, *colon, *key, *val, *e;
	ssize_t n;
	int ret = 0;

	if (vf_index < 0)
		return -EINVAL;
	ret = snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/sriov/%d/config", sysfs_root,
		       pf_bdf, vf_index);
	if (ret < 0 || (size_t)ret >= sizeof(path))
		return -ENAMETOOLONG;
	n = file_read(AT_FDCWD, path, 0, text, sizeof(text));
	if (n < 0)
		return (int)n;
	ret = 0;
	memset(cfg, 0, sizeof(*cfg));
	cfg->vlan_proto = ETH_P_8021Q;
	for (line = text; ret == 0 && *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		key = line;
		for (e = colon; e > key && (e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		val = colon + 1;
		while (*val == ' ' || *val == '\t')
			val++;
		val[strcspn(val, " \t")] = '\0';
		ret = sysfs_config_line(key, val, cfg);
	}
	if (ret == 0 && !(cfg->mask & PF_VF_MAC))
		ret = -EBADMSG;
	return ret;
}
