/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cni_delegate: run another plugin (the IPAM) as the runtime would, through
 * CNI_PATH, and read its answer.
 */
#ifndef CNI_DELEGATE_H
#define CNI_DELEGATE_H

#include "cni.h"

/*
 * Run plugin `type` found in CNI_PATH with the request's env, CNI_COMMAND
 * replaced by `cmd`, and the request's stdin. Its stderr passes through.
 * On ADD, *res (if not NULL) gets the parsed result. A failing delegate's
 * error object is propagated into *err with its code, its msg prefixed
 * by the plugin name.
 */
int cni_delegate(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		 struct cni_result *res, struct cni_error *err);

#endif
