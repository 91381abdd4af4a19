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
	(void)err;
	res->n_ifaces = 1;
	snprintf(res->ifaces[0].name, sizeof(res->ifaces[0].name), "%s", req->env.ifname);
	snprintf(res->ifaces[0].mac, sizeof(res->ifaces[0].mac), "02:00:00:00:00:01");
	res->ifaces[0].mtu = 9000;
	snprintf(res->ifaces[0].sandbox, sizeof(res->ifaces[0].sandbox), "%s", req->env.netns);
	snprintf(res->ifaces[0].pci_id, sizeof(res->ifaces[0].pci_id), "0000:3b:02.1");
	res->n_ips = 2;
	snprintf(res->ips[0].address, sizeof(res->ips[0].address), "10.1.0.5/24");
	snprintf(res->ips[0].gateway, sizeof(res->ips[0].gateway), "10.1.0.1");
	res->ips[0].iface = 0;
	snprintf(res->ips[1].address, sizeof(res->ips[1].address), "fd00::5/64");
	res->ips[1].iface = 0;
	res->n_routes = 1;
	snprintf(res->routes[0].dst, sizeof(res->routes[0].dst), "10.2.0.0/16");
	snprintf(res->routes[0].gw, sizeof(res->routes[0].gw), "10.1.0.1");
	res->routes[0].mtu = 8000;
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
		.cmd_add = skel_add,
		.cmd_del = skel_ok,
		.cmd_check = skel_ok,
		.cmd_status = skel_ok,
		.cmd_gc = skel_gc,
	};

	return cni_plugin_main(&skel, argc, argv);
}
