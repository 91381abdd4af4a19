/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The verbs module against the installed libibverbs, on a machine with no
 * RDMA device: every function it resolves is there at the version it asks
 * for, and a device that is not there is -ENODEV.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#include "check.h"
#include "verbs.h"

static void test_every_symbol_resolves(void)
{
	void *lib;

	CHECK_INT(verbs_load(), 0);
	/* Loaded once, and kept. */
	CHECK_INT(verbs_load(), 0);
	lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib != NULL);
	if (lib)
		dlclose(lib);
}

static void test_without_the_device(void)
{
	int index = -1;

	CHECK_INT(rdma_verbs_dev_present("mlx5_nosuch"), -ENODEV);
	CHECK_INT(rdma_gid_index_for("mlx5_nosuch", 1, "10.0.0.1/24", true, 0, &index), -ENODEV);
	CHECK_INT(rdma_gid_index_for("mlx5_nosuch", 1, "10.0.0.x", true, 0, &index), -EINVAL);
	CHECK_INT(rdma_gid_index_for("mlx5_nosuch", 0, "10.0.0.1", true, 0, &index), -EINVAL);
	CHECK_INT(index, -1);
}

int main(void)
{
	RUN(test_every_symbol_resolves);
	RUN(test_without_the_device);
	return check_summary();
}
