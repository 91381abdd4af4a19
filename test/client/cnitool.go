// SPDX-License-Identifier: Apache-2.0

// cnitool: run a network configuration against a namespace through libcni,
// the library that CRI-O, containerd, podman and Multus use to call plugins.
//
//	cnitool add|check|del NETCONF_FILE NETNS_PATH
//
// NETCONF_FILE is a .conflist, or a single plugin's .conf. Environment:
// CNI_PATH (':'-separated), CNI_IFNAME (default eth0), CNI_CONTAINERID
// (default "cnitool-" + 16 hex digits of the sha512 of NETNS_PATH),
// CNI_ARGS ("K=V;K=V"), CAP_ARGS (a JSON object of capability arguments),
// CNI_CACHE_DIR (libcni's result cache).
//
// On add the result is printed on stdout. On failure the error goes to
// stderr, a plugin's error object (code, msg, details) to stdout, and the
// exit code is 1.
package main

import (
	"context"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

func fail(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
	var cniErr *types.Error
	if errors.As(err, &cniErr) {
		if out, jerr := json.Marshal(cniErr); jerr == nil {
			fmt.Println(string(out))
		}
	}
	os.Exit(1)
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: %s add|check|del NETCONF_FILE NETNS_PATH\n", filepath.Base(os.Args[0]))
	os.Exit(2)
}

func loadList(file string) (*libcni.NetworkConfigList, error) {
	list, err := libcni.ConfListFromFile(file)
	if err == nil {
		return list, nil
	}
	conf, cerr := libcni.ConfFromFile(file)
	if cerr != nil {
		return nil, fmt.Errorf("%s: neither a conflist (%v) nor a conf (%v)", file, err, cerr)
	}
	return libcni.ConfListFromConf(conf)
}

func parseArgs(s string) ([][2]string, error) {
	var out [][2]string
	for _, pair := range strings.Split(s, ";") {
		if pair == "" {
			continue
		}
		kv := strings.SplitN(pair, "=", 2)
		if len(kv) != 2 || kv[0] == "" {
			return nil, fmt.Errorf("CNI_ARGS: %q is not KEY=VALUE", pair)
		}
		out = append(out, [2]string{kv[0], kv[1]})
	}
	return out, nil
}

func main() {
	if len(os.Args) != 4 {
		usage()
	}
	cmd, file, netns := os.Args[1], os.Args[2], os.Args[3]
	if cmd != "add" && cmd != "check" && cmd != "del" {
		usage()
	}

	list, err := loadList(file)
	if err != nil {
		fail(err)
	}

	ifname := os.Getenv("CNI_IFNAME")
	if ifname == "" {
		ifname = "eth0"
	}
	containerID := os.Getenv("CNI_CONTAINERID")
	if containerID == "" {
		sum := sha512.Sum512([]byte(netns))
		containerID = fmt.Sprintf("cnitool-%x", sum[:8])
	}
	args, err := parseArgs(os.Getenv("CNI_ARGS"))
	if err != nil {
		fail(err)
	}
	var capArgs map[string]interface{}
	if s := os.Getenv("CAP_ARGS"); s != "" {
		if err := json.Unmarshal([]byte(s), &capArgs); err != nil {
			fail(fmt.Errorf("CAP_ARGS: not a JSON object: %v", err))
		}
	}

	rt := &libcni.RuntimeConf{
		ContainerID:    containerID,
		NetNS:          netns,
		IfName:         ifname,
		Args:           args,
		CapabilityArgs: capArgs,
		CacheDir:       os.Getenv("CNI_CACHE_DIR"),
	}
	cni := libcni.NewCNIConfigWithCacheDir(filepath.SplitList(os.Getenv("CNI_PATH")), rt.CacheDir, nil)
	ctx := context.Background()

	switch cmd {
	case "add":
		result, err := cni.AddNetworkList(ctx, list, rt)
		if err != nil {
			fail(err)
		}
		if err := result.Print(); err != nil {
			fail(err)
		}
	case "check":
		if err := cni.CheckNetworkList(ctx, list, rt); err != nil {
			fail(err)
		}
	case "del":
		if err := cni.DelNetworkList(ctx, list, rt); err != nil {
			fail(err)
		}
	}
}
