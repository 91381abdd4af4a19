/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The igb benchmark's no-op plugin (scripts/bench-igb-vm): what a client's
 * exec of a plugin costs when the plugin does nothing. It reads its config
 * (as every plugin must, or the client's write blocks), answers ADD with a
 * fixed result of the config's cniVersion, VERSION with the versions it
 * speaks, and anything else with nothing. The floor of the benchmark is
 * this exec through the same client plus the bare kernel work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	const char *cmd = getenv("CNI_COMMAND");
	char buf[4096];

	while (fread(buf, 1, sizeof(buf), stdin) > 0)
		;
	if (!cmd)
		return 1;
	if (!strcmp(cmd, "VERSION")) {
		puts("{\"cniVersion\": \"1.0.0\", \"supportedVersions\": [\"0.3.1\", \"0.4.0\", \"1.0.0\"]}");
	} else if (!strcmp(cmd, "ADD")) {
		puts("{\"cniVersion\": \"1.0.0\", \"interfaces\": [{\"name\": \"net1\", \"sandbox\": \"/run/netns/x\"}], "
		     "\"ips\": [{\"address\": \"10.82.0.2/24\", \"interface\": 0}]}");
	}
	return 0;
}
