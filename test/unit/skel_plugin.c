/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A plugin that does nothing but go through the skeleton: its ADD answers
 * one fixed interface, address and route, so skel.sh can check the
 * protocol as a runtime sees it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cni.h"
#include "log.h"

static int skel_add(struct cni_request *req, struct cni_result *res, struct cni_error *err)
{
	struct cni_iface *f = cni_result_add_iface(res);
	struct cni_route *rt = cni_result_add_route(res);

	(void)err;
	snprintf(f->name, sizeof(f->name), "%s", req->env.ifname);
	snprintf(f->mac, sizeof(f->mac), "02:00:00:00:00:01");
	f->mtu = 9000;
	snprintf(f->sandbox, sizeof(f->sandbox), "%s", req->env.netns);
	snprintf(f->pci_id, sizeof(f->pci_id), "0000:3b:02.1");
	res->n_ips = 2;
	snprintf(res->ips[0].address, sizeof(res->ips[0].address), "10.1.0.5/24");
	snprintf(res->ips[0].gateway, sizeof(res->ips[0].gateway), "10.1.0.1");
	res->ips[0].iface = 0;
	snprintf(res->ips[1].address, sizeof(res->ips[1].address), "fd00::5/64");
	res->ips[1].iface = 0;
	snprintf(rt->dst, sizeof(rt->dst), "10.2.0.0/16");
	snprintf(rt->gw, sizeof(rt->gw), "10.1.0.1");
	rt->mtu = 8000;
	return 0;
}

static int skel_ok(struct cni_request *req, struct cni_error *err)
{
	(void)req;
	(void)err;
	return 0;
}

static int skel_gc(struct cni_request *req, struct cni_error *err)
{
	struct cni_attachment *list;
	int n;

	if (cni_gc_valid_attachments(req, &list, &n, err))
		return -1;
	log_info("%d valid attachments", n);
	free(list);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cni_plugin skel = {
		.name = "skel-plugin",
		.about = "skel-plugin: a fixture for the CNI skeleton's tests",
		.formats = "fixture record " CNI_STR(3),
		.cmd_add = skel_add,
		.cmd_del = skel_ok,
		.cmd_check = skel_ok,
		.cmd_status = skel_ok,
		.cmd_gc = skel_gc,
	};

	return cni_plugin_main(&skel, argc, argv);
}
