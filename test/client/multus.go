// SPDX-License-Identifier: Apache-2.0

// multus: the calls that Multus (thin and thick), dra-driver-sriov's
// standalone mode and CRI-O's GC make to a network's plugins, made the same
// way through libcni. None of those clients is packaged where this project
// installs from, so the suite reproduces what they send, read from their
// sources (Multus v4.2.x pkg/multus, pkg/types, pkg/server; the
// network-attachment-definition client's pkg/utils; dra-driver-sriov
// pkg/cni; libcni 1.2's GCNetworkList).
//
//	multus thin                     a CNI plugin, called as a runtime calls Multus
//	multus thick DAEMON_CONFIG      the same behind multus-shim and its daemon
//	multus dra add|del CONF NETNS   dra-driver-sriov's standalone call
//	multus gc CONFLIST              CRI-O's GC of one network (libcni 1.2+)
//
// thin and thick read Multus's config on stdin: cniVersion, binDir, cniDir
// (Multus's cache), delegates (the cluster network, a conflist) and apiDir,
// which stands in for the API server and the kubelet:
//
//	apiDir/pods/NS/NAME.json          the pod: metadata.uid and the
//	                                  k8s.v1.cni.cncf.io/networks annotation;
//	                                  ADD writes network-status into it
//	apiDir/nads/NS/NAME.json          NetworkAttachmentDefinitions
//	apiDir/podresources/NS/NAME.json  the kubelet's pod-resources answer:
//	                                  {"resource": ["PCI address", ...]}
//
// The device plugin's device-info files are read from, and Multus's written
// to, DEVINFO_ROOT (default /var/run/k8s.cni.cncf.io/devinfo).
//
// thick: DAEMON_CONFIG holds the daemon's keys (chrootDir, and any key of
// Multus's config, which override the shim's stdin as the daemon does) and
// daemonEnvironment, the daemon's own environment ("K=V" strings): the
// plugins run chrooted into chrootDir with it plus libcni's CNI_*; nothing
// else of the runtime's environment reaches them. Every DEL answers success.
//
// dra: the environment gives the pod (POD_NAMESPACE, POD_NAME, POD_UID,
// CONTAINER_ID), the VF (DEVICE_ID), the interface (CNI_IFNAME), CNI_PATH
// and CNI_CACHE_DIR. ADD prints the KEP-4817 networkData on stdout.
//
// gc: VALID_ATTACHMENTS (a JSON list of {containerID, ifname}, or null),
// CNI_PATH, CNI_CACHE_DIR. DEL of every attachment of the network cached by
// libcni and not valid, then GC of every plugin of the list.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	cni100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
)

const (
	networksAnnot      = "k8s.v1.cni.cncf.io/networks"
	networkStatusAnnot = "k8s.v1.cni.cncf.io/network-status"
	resourceNameAnnot  = "k8s.v1.cni.cncf.io/resourceName"
	draDriverName      = "sriovnetwork.k8snetworkplumbingwg.io"
)

type multusConf struct {
	CNIVersion string            `json:"cniVersion"`
	Name       string            `json:"name"`
	BinDir     string            `json:"binDir"`
	CNIDir     string            `json:"cniDir"`
	APIDir     string            `json:"apiDir"`
	Delegates  []json.RawMessage `json:"delegates"`
}

// delegate is one network of the pod as Multus caches it between ADD and DEL.
type delegate struct {
	Name         string          `json:"name"`
	Bytes        json.RawMessage `json:"bytes"`
	ConfList     bool            `json:"confList"`
	Master       bool            `json:"master"`
	IfName       string          `json:"ifname,omitempty"`
	ResourceName string          `json:"resourceName,omitempty"`
	DeviceID     string          `json:"deviceID,omitempty"`
	MAC          string          `json:"mac,omitempty"`
	IPs          []string        `json:"ips,omitempty"`
}

type object struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         string            `json:"uid"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Config string `json:"config"`
	} `json:"spec"`
}

type selection struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Interface string   `json:"interface"`
	MAC       string   `json:"mac"`
	IPs       []string `json:"ips"`
}

type k8sArgs struct{ namespace, name, sandbox, uid string }

func devinfoRoot() string {
	if d := os.Getenv("DEVINFO_ROOT"); d != "" {
		return d
	}
	return "/var/run/k8s.cni.cncf.io/devinfo"
}

func parseArgs(s string) [][2]string {
	var out [][2]string
	for _, pair := range strings.Split(s, ";") {
		if kv := strings.SplitN(pair, "=", 2); len(kv) == 2 {
			out = append(out, [2]string{kv[0], kv[1]})
		}
	}
	return out
}

func getK8sArgs(s string) k8sArgs {
	var k k8sArgs
	for _, kv := range parseArgs(s) {
		switch kv[0] {
		case "K8S_POD_NAMESPACE":
			k.namespace = kv[1]
		case "K8S_POD_NAME":
			k.name = kv[1]
		case "K8S_POD_INFRA_CONTAINER_ID":
			k.sandbox = kv[1]
		case "K8S_POD_UID":
			k.uid = kv[1]
		}
	}
	return k
}

func readObject(path string) (*object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var o object
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &o, nil
}

type node struct {
	conf    multusConf
	exec    invoke.Exec
	shimDel bool // thick: the shim hides DEL's errors
}

func (n *node) podPath(k k8sArgs) string {
	return filepath.Join(n.conf.APIDir, "pods", k.namespace, k.name+".json")
}

// The networks annotation: "a,b" or "ns/net@if" items, or a JSON list.
func parseNetworks(annot, podNamespace string) ([]selection, error) {
	var list []selection
	annot = strings.TrimSpace(annot)
	if strings.HasPrefix(annot, "[") {
		if err := json.Unmarshal([]byte(annot), &list); err != nil {
			return nil, fmt.Errorf("parsePodNetworkAnnotation: failed to parse pod Network Attachment Selection Annotation JSON format: %v", err)
		}
	} else {
		for _, item := range strings.Split(annot, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			var s selection
			if i := strings.Index(item, "@"); i >= 0 {
				s.Interface = item[i+1:]
				item = item[:i]
			}
			if i := strings.Index(item, "/"); i >= 0 {
				s.Namespace = item[:i]
				item = item[i+1:]
			}
			s.Name = item
			list = append(list, s)
		}
	}
	for i := range list {
		if list[i].Namespace == "" {
			list[i].Namespace = podNamespace
		}
	}
	return list, nil
}

// injectDeviceID sets deviceID and pciBusID at the top level of a config,
// or of every plugin of a conflist.
func injectDeviceID(conf []byte, confList bool, deviceID string) ([]byte, error) {
	var raw map[string]interface{}
	if err := json.Unmarshal(conf, &raw); err != nil {
		return nil, err
	}
	targets := []map[string]interface{}{raw}
	if confList {
		targets = nil
		plugins, _ := raw["plugins"].([]interface{})
		for i, p := range plugins {
			m, ok := p.(map[string]interface{})
			if !ok {
				return nil, fmt.Errorf("addDeviceIDInConfList: unable to typecast plugin #%d", i)
			}
			targets = append(targets, m)
		}
	}
	for _, m := range targets {
		m["deviceID"] = deviceID
		m["pciBusID"] = deviceID
	}
	return json.Marshal(raw)
}

// The NAD's spec.config with its name defaulted to the NAD's.
func configFromSpec(config, name string) ([]byte, error) {
	var raw map[string]interface{}
	if err := json.Unmarshal([]byte(config), &raw); err != nil {
		return nil, fmt.Errorf("failed to unmarshal Spec.Config: %v", err)
	}
	if n, ok := raw["name"]; !ok || n == "" {
		raw["name"] = name
	}
	return json.Marshal(raw)
}

// podDelegates reads the pod's networks, their NADs and the devices the
// kubelet allocated, as Multus does on ADD (and on a DEL without its cache).
func (n *node) podDelegates(pod *object, k k8sArgs) ([]*delegate, error) {
	annot := pod.Metadata.Annotations[networksAnnot]
	if annot == "" {
		return nil, nil
	}
	sels, err := parseNetworks(annot, k.namespace)
	if err != nil {
		return nil, err
	}
	resources := map[string][]string{}
	used := map[string]int{}
	if b, err := os.ReadFile(filepath.Join(n.conf.APIDir, "podresources", k.namespace, k.name+".json")); err == nil {
		if err := json.Unmarshal(b, &resources); err != nil {
			return nil, fmt.Errorf("pod-resources: %v", err)
		}
	}
	var out []*delegate
	for _, s := range sels {
		nad, err := readObject(filepath.Join(n.conf.APIDir, "nads", s.Namespace, s.Name+".json"))
		if err != nil {
			return nil, fmt.Errorf("getKubernetesDelegate: cannot find a network-attachment-definition (%s) in namespace (%s): %v", s.Name, s.Namespace, err)
		}
		d := &delegate{Name: s.Namespace + "/" + s.Name, IfName: s.Interface, MAC: s.MAC, IPs: s.IPs}
		if r, ok := nad.Metadata.Annotations[resourceNameAnnot]; ok {
			d.ResourceName = r
			if ids := resources[r]; used[r] < len(ids) {
				d.DeviceID = ids[used[r]]
				used[r]++
			}
		}
		conf, err := configFromSpec(nad.Spec.Config, s.Name)
		if err != nil {
			return nil, err
		}
		var probe struct {
			Type    string        `json:"type"`
			Plugins []interface{} `json:"plugins"`
		}
		if err := json.Unmarshal(conf, &probe); err != nil {
			return nil, err
		}
		if probe.Type == "" {
			if probe.Plugins == nil {
				return nil, fmt.Errorf("LoadDelegateNetConfList: delegate must have the 'type' or 'plugin' field")
			}
			d.ConfList = true
		}
		if d.DeviceID != "" {
			if conf, err = injectDeviceID(conf, d.ConfList, d.DeviceID); err != nil {
				return nil, err
			}
		}
		d.Bytes = conf
		out = append(out, d)
	}
	return out, nil
}

func (n *node) clusterDelegates() []*delegate {
	var out []*delegate
	for i, raw := range n.conf.Delegates {
		var probe struct {
			Name    string        `json:"name"`
			Plugins []interface{} `json:"plugins"`
		}
		_ = json.Unmarshal(raw, &probe)
		out = append(out, &delegate{Name: probe.Name, Bytes: raw, ConfList: probe.Plugins != nil, Master: i == 0})
	}
	return out
}

func ifnameOf(d *delegate, argIf string, idx int) string {
	if d.IfName != "" {
		return d.IfName
	}
	if d.Master {
		return argIf
	}
	return fmt.Sprintf("net%d", idx)
}

// runtimeConf builds what Multus hands libcni for one delegate: the K8S_*
// args (then the runtime's CNI_ARGS, thin only: thick's daemon has none in
// its environment), and the capability arguments, of which libcni passes on
// only those the delegate's plugins declare.
func runtimeConf(args *skel.CmdArgs, k k8sArgs, ifName string, d *delegate) (*libcni.RuntimeConf, string) {
	rt := &libcni.RuntimeConf{
		ContainerID: args.ContainerID,
		NetNS:       args.Netns,
		IfName:      ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "true"},
			{"K8S_POD_NAMESPACE", k.namespace},
			{"K8S_POD_NAME", k.name},
			{"K8S_POD_INFRA_CONTAINER_ID", k.sandbox},
			{"K8S_POD_UID", k.uid},
		},
	}
	for _, kv := range parseArgs(os.Getenv("CNI_ARGS")) {
		found := false
		for i := range rt.Args {
			if rt.Args[i][0] == kv[0] && rt.Args[i][1] == "" && kv[1] != "" {
				rt.Args[i][1] = kv[1]
				found = true
				break
			}
		}
		if !found {
			rt.Args = append(rt.Args, kv)
		}
	}
	if d.Master {
		return rt, ""
	}
	caps := map[string]interface{}{}
	if len(d.IPs) != 0 {
		caps["ips"] = d.IPs
	}
	if d.MAC != "" {
		caps["mac"] = d.MAC
	}
	devInfo := ""
	if d.DeviceID != "" {
		caps["deviceID"] = d.DeviceID
		name := fmt.Sprintf("%s-%s_%s", d.Name, args.ContainerID, ifName)
		devInfo = filepath.Join(devinfoRoot(), "cni", strings.ReplaceAll(name, "/", "-"))
		caps["CNIDeviceInfoFile"] = devInfo
	}
	rt.CapabilityArgs = caps
	return rt, devInfo
}

func (n *node) cni() *libcni.CNIConfig {
	dirs := append([]string{n.conf.BinDir}, filepath.SplitList(os.Getenv("CNI_PATH"))...)
	return libcni.NewCNIConfigWithCacheDir(dirs, n.conf.CNIDir, n.exec)
}

func confList(d *delegate) (*libcni.NetworkConfigList, *libcni.NetworkConfig, error) {
	if d.ConfList {
		l, err := libcni.ConfListFromBytes(d.Bytes)
		return l, nil, err
	}
	c, err := libcni.ConfFromBytes(d.Bytes)
	return nil, c, err
}

func (n *node) delegateAdd(d *delegate, rt *libcni.RuntimeConf) (types.Result, error) {
	// Deprecated since Multus 3.5, still sent.
	if d.MAC != "" {
		rt.Args = append(rt.Args, [2]string{"MAC", d.MAC})
	}
	if d.IPs != nil {
		rt.Args = append(rt.Args, [2]string{"IP", strings.Join(d.IPs, ",")})
	}
	l, c, err := confList(d)
	if err != nil {
		return nil, err
	}
	if l != nil {
		return n.cni().AddNetworkList(context.Background(), l, rt)
	}
	return n.cni().AddNetwork(context.Background(), c, rt)
}

func (n *node) delegateDel(d *delegate, rt *libcni.RuntimeConf) error {
	l, c, err := confList(d)
	if err != nil {
		return err
	}
	if l != nil {
		err = n.cni().DelNetworkList(context.Background(), l, rt)
	} else {
		err = n.cni().DelNetwork(context.Background(), c, rt)
	}
	if err != nil {
		return fmt.Errorf("DelegateDel: error invoking DelegateDel - %q: %v", d.Name, err)
	}
	return nil
}

// delPlugins deletes delegates lastIdx..0, removing Multus's device-info
// file of each; it goes on past errors and returns them all.
func (n *node) delPlugins(args *skel.CmdArgs, k k8sArgs, ds []*delegate, lastIdx int) error {
	var errs []string
	for idx := lastIdx; idx >= 0; idx-- {
		rt, devInfo := runtimeConf(args, k, ifnameOf(ds[idx], args.IfName, idx), ds[idx])
		if err := n.delegateDel(ds[idx], rt); err != nil {
			errs = append(errs, err.Error())
		}
		if devInfo != "" {
			_ = os.Remove(devInfo)
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, " / "))
	}
	return nil
}

// copyDeviceInfo copies the device plugin's file to the delegate's
// CNIDeviceInfoFile (re-encoded, mode 0444, never over an existing file).
func copyDeviceInfo(dst, resource, deviceID string) error {
	src := filepath.Join(devinfoRoot(), "dp", fmt.Sprintf("%s-%s-device.json",
		strings.ReplaceAll(resource, "/", "-"), strings.ReplaceAll(deviceID, "/", "-")))
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var info map[string]interface{}
	if err := json.Unmarshal(b, &info); err != nil {
		return err
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("Device Information file already exists: %s", dst)
	}
	if err := os.MkdirAll(filepath.Dir(dst), os.ModeDir); err != nil {
		return err
	}
	out, _ := json.Marshal(info)
	return os.WriteFile(dst, out, 0444)
}

type networkStatus struct {
	Name       string                 `json:"name"`
	Interface  string                 `json:"interface,omitempty"`
	IPs        []string               `json:"ips,omitempty"`
	Mac        string                 `json:"mac,omitempty"`
	Default    bool                   `json:"default,omitempty"`
	DNS        map[string]interface{} `json:"dns"`
	DeviceInfo map[string]interface{} `json:"device-info,omitempty"`
}

// statuses is the network-status of one delegate's result: one entry per
// interface in the sandbox; with one interface only, every address is its.
func statuses(r types.Result, name string, master bool, dev map[string]interface{}) ([]networkStatus, error) {
	res, err := cni100.NewResultFromResult(r)
	if err != nil {
		return nil, err
	}
	var out []networkStatus
	index := map[int]int{}
	for i, iface := range res.Interfaces {
		if iface.Sandbox == "" {
			continue
		}
		index[i] = len(out)
		out = append(out, networkStatus{Name: name, Interface: iface.Name, Mac: iface.Mac,
			Default: master && len(out) == 0, DNS: map[string]interface{}{}, DeviceInfo: dev})
	}
	if len(res.Interfaces) == 1 && len(out) == 0 {
		out = append(out, networkStatus{Name: name, Default: master, DNS: map[string]interface{}{}, DeviceInfo: dev})
		index[0] = 0
	}
	for _, ip := range res.IPs {
		switch {
		case len(res.Interfaces) == 1:
			out[0].IPs = append(out[0].IPs, ip.Address.IP.String())
		case ip.Interface != nil:
			if j, ok := index[*ip.Interface]; ok {
				out[j].IPs = append(out[j].IPs, ip.Address.IP.String())
			}
		case len(out) > 0:
			out[len(out)-1].IPs = append(out[len(out)-1].IPs, ip.Address.IP.String())
		}
	}
	return out, nil
}

// setNetworkStatus is the pod update: the annotation, in the pod's object.
func (n *node) setNetworkStatus(k k8sArgs, st []networkStatus) error {
	b, err := os.ReadFile(n.podPath(k))
	if err != nil {
		return err
	}
	var pod map[string]interface{}
	if err := json.Unmarshal(b, &pod); err != nil {
		return err
	}
	meta, _ := pod["metadata"].(map[string]interface{})
	if meta == nil {
		meta = map[string]interface{}{}
		pod["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]interface{})
	if ann == nil {
		ann = map[string]interface{}{}
		meta["annotations"] = ann
	}
	if st == nil {
		st = []networkStatus{}
	}
	sb, _ := json.MarshalIndent(st, "", "    ")
	ann[networkStatusAnnot] = string(sb)
	fmt.Fprintf(os.Stderr, "network-status: %s\n", sb)
	out, _ := json.Marshal(pod)
	tmp := n.podPath(k) + ".tmp"
	if err := os.WriteFile(tmp, out, 0644); err != nil {
		return err
	}
	return os.Rename(tmp, n.podPath(k))
}

func (n *node) cacheFile(id string) string { return filepath.Join(n.conf.CNIDir, id) }

func (n *node) cmdAdd(args *skel.CmdArgs) error {
	k := getK8sArgs(args.Args)
	prefix := fmt.Sprintf("Multus: [%s/%s/%s]: ", k.namespace, k.name, k.uid)
	pod, err := readObject(n.podPath(k))
	if err != nil {
		return fmt.Errorf("%serror getting pod: pods %q not found", prefix, k.name)
	}
	if k.uid != "" && pod.Metadata.UID != k.uid {
		return fmt.Errorf("%serror getting pod: expected pod UID %q but got %q from Kube API", prefix, k.uid, pod.Metadata.UID)
	}
	ds := n.clusterDelegates()
	more, err := n.podDelegates(pod, k)
	if err != nil {
		return fmt.Errorf("%serror loading k8s delegates k8s args: %v", prefix, err)
	}
	ds = append(ds, more...)
	cache, _ := json.Marshal(ds)
	if err := os.MkdirAll(n.conf.CNIDir, 0700); err != nil {
		return err
	}
	if err := os.WriteFile(n.cacheFile(args.ContainerID), cache, 0600); err != nil {
		return fmt.Errorf("%serror saving the delegates: %v", prefix, err)
	}

	var result types.Result
	var status []networkStatus
	for idx, d := range ds {
		rt, devInfo := runtimeConf(args, k, ifnameOf(d, args.IfName, idx), d)
		if devInfo != "" && d.ResourceName != "" && d.DeviceID != "" {
			_ = copyDeviceInfo(devInfo, d.ResourceName, d.DeviceID)
		}
		r, err := n.delegateAdd(d, rt)
		if err != nil {
			_ = n.delPlugins(args, k, ds, idx)
			return fmt.Errorf("[%s/%s/%s:%s]: error adding container to network %q: %v",
				k.namespace, k.name, k.uid, d.Name, d.Name, err)
		}
		if d.Master || result == nil {
			result = r
		}
		var dev map[string]interface{}
		if devInfo != "" {
			if b, err := os.ReadFile(devInfo); err == nil {
				_ = json.Unmarshal(b, &dev)
			}
		}
		st, err := statuses(r, d.Name, d.Master, dev)
		if err != nil {
			return fmt.Errorf("%serror setting network statuses: %v", prefix, err)
		}
		status = append(status, st...)
	}
	if err := n.setNetworkStatus(k, status); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%serror setting the networks status: %v", prefix, err)
	}
	var probe struct {
		CNIVersion string `json:"cniVersion"`
	}
	_ = json.Unmarshal(args.StdinData, &probe)
	out, err := result.GetAsVersion(probe.CNIVersion)
	if err != nil {
		return err
	}
	return out.Print()
}

// cmdDel: the delegates from Multus's cache, else (the cache gone, as after
// a failed DEL) read again from the pod and its NADs, else nothing to do.
func (n *node) cmdDel(args *skel.CmdArgs) error {
	k := getK8sArgs(args.Args)
	var ds []*delegate
	path := n.cacheFile(args.ContainerID)
	b, err := os.ReadFile(path)
	if err == nil && json.Unmarshal(b, &ds) == nil && len(ds) > 0 {
		ds[0].Master = true
	} else {
		pod, perr := readObject(n.podPath(k))
		if !os.IsNotExist(err) || perr != nil {
			fmt.Fprintf(os.Stderr, "Multus: failed to get the cached delegates file: %v, cannot properly delete\n", err)
			return nil
		}
		ds = n.clusterDelegates()
		more, err := n.podDelegates(pod, k)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Multus: failed to get delegates: %v, but continue to delete clusterNetwork\n", err)
		}
		ds = append(ds, more...)
	}
	e := n.delPlugins(args, k, ds, len(ds)-1)
	_ = os.Remove(path)
	return e
}

func (n *node) cmdCheck(args *skel.CmdArgs) error {
	k := getK8sArgs(args.Args)
	for idx, d := range n.clusterDelegates() {
		rt, _ := runtimeConf(args, k, ifnameOf(d, args.IfName, idx), d)
		l, c, err := confList(d)
		if err != nil {
			return err
		}
		if l != nil {
			err = n.cni().CheckNetworkList(context.Background(), l, rt)
		} else {
			err = n.cni().CheckNetwork(context.Background(), c, rt)
		}
		if err != nil {
			return fmt.Errorf("DelegateCheck: error invoking ConflistCheck - %q: %v", d.Name, err)
		}
	}
	return nil
}

// chrootExec runs plugins with the host's root as thick's daemon does
// (chrootDir is the host's / mounted into the daemon's container).
type chrootExec struct {
	root string
	version.PluginDecoder
}

func (e *chrootExec) FindInPath(plugin string, paths []string) (string, error) {
	for _, dir := range paths {
		p := filepath.Join(dir, plugin)
		if fi, err := os.Stat(filepath.Join(e.root, p)); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("failed to find plugin %q in path %s", plugin, paths)
}

func (e *chrootExec) ExecPlugin(ctx context.Context, path string, stdin []byte, environ []string) ([]byte, error) {
	var stdout, stderr strings.Builder
	c := exec.CommandContext(ctx, path)
	c.Env = environ
	c.Dir = "/"
	c.SysProcAttr = &syscall.SysProcAttr{Chroot: e.root}
	c.Stdin = strings.NewReader(string(stdin))
	c.Stdout = &stdout
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		emsg := types.Error{}
		switch {
		case stdout.Len() == 0 && stderr.Len() == 0:
			emsg.Msg = fmt.Sprintf("netplugin failed with no error message: %v", err)
		case stdout.Len() == 0:
			emsg.Msg = fmt.Sprintf("netplugin failed: %q", stderr.String())
		default:
			if perr := json.Unmarshal([]byte(stdout.String()), &emsg); perr != nil {
				emsg.Msg = fmt.Sprintf("netplugin failed but error parsing its diagnostic message %q: %v", stdout.String(), perr)
			}
		}
		return nil, &emsg
	}
	os.Stderr.WriteString(stderr.String())
	return []byte(stdout.String()), nil
}

func loadConf(stdin []byte, override map[string]interface{}) (multusConf, error) {
	var c multusConf
	var raw map[string]interface{}
	if err := json.Unmarshal(stdin, &raw); err != nil {
		return c, err
	}
	for key, v := range override {
		raw[key] = v
	}
	b, _ := json.Marshal(raw)
	err := json.Unmarshal(b, &c)
	return c, err
}

func runMultus(thick bool, daemonConfig string) {
	var override map[string]interface{}
	root := ""
	if thick {
		b, err := os.ReadFile(daemonConfig)
		if err == nil {
			err = json.Unmarshal(b, &override)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "multus-daemon: %v\n", err)
			os.Exit(1)
		}
		root, _ = override["chrootDir"].(string)
	}
	newNode := func(args *skel.CmdArgs) (*node, error) {
		c, err := loadConf(args.StdinData, override)
		if err != nil {
			return nil, err
		}
		n := &node{conf: c}
		if thick {
			n.exec = &chrootExec{root: root}
		}
		return n, nil
	}
	if thick {
		// The request carries the runtime's CNI_* (skel has read them);
		// the daemon runs the plugins with its own environment.
		env, _ := override["daemonEnvironment"].([]interface{})
		keep := map[string]string{}
		for _, v := range []string{"CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_ARGS", "CNI_PATH"} {
			keep[v] = os.Getenv(v)
		}
		os.Clearenv()
		for _, e := range env {
			if s, ok := e.(string); ok {
				if kv := strings.SplitN(s, "=", 2); len(kv) == 2 {
					os.Setenv(kv[0], kv[1])
				}
			}
		}
		// skel reads the request's variables once more when it dispatches.
		for k, v := range keep {
			os.Setenv(k, v)
		}
	}
	add := func(args *skel.CmdArgs) error {
		n, err := newNode(args)
		if err != nil {
			return err
		}
		if thick {
			clearRequest()
			if err := n.cmdAdd(args); err != nil {
				return fmt.Errorf("CmdAdd (shim): CNI request failed with status 400: '%+v ERRORED: error configuring pod [%s/%s] networking: %v'",
					requestOf(args), getK8sArgs(args.Args).namespace, getK8sArgs(args.Args).name, err)
			}
			return nil
		}
		return n.cmdAdd(args)
	}
	del := func(args *skel.CmdArgs) error {
		n, err := newNode(args)
		if err != nil {
			return err
		}
		if thick {
			clearRequest()
			if err := n.cmdDel(args); err != nil {
				// No error in DEL (as of CNI spec), says the shim.
				fmt.Fprintf(os.Stderr, "CmdDel (shim): %v\n", err)
			}
			return nil
		}
		return n.cmdDel(args)
	}
	check := func(args *skel.CmdArgs) error {
		n, err := newNode(args)
		if err != nil {
			return err
		}
		if thick {
			clearRequest()
		}
		return n.cmdCheck(args)
	}
	skel.PluginMain(add, check, del, version.All, "multus (reproduced)")
}

// clearRequest leaves the daemon's environment only: the request's CNI_*
// reach the plugins through libcni's RuntimeConf, as in the daemon.
func clearRequest() {
	for _, v := range []string{"CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_ARGS", "CNI_PATH"} {
		os.Unsetenv(v)
	}
}

func requestOf(args *skel.CmdArgs) string {
	return fmt.Sprintf("ContainerID:%q Netns:%q IfName:%q Args:%q Path:%q", args.ContainerID, args.Netns, args.IfName, args.Args, args.Path)
}

// networkData is KEP-4817's, as dra-driver-sriov fills it from the result.
type networkData struct {
	InterfaceName   string   `json:"interfaceName,omitempty"`
	IPs             []string `json:"ips,omitempty"`
	HardwareAddress string   `json:"hardwareAddress,omitempty"`
}

func runDRA(cmd, confFile, netns string) error {
	raw, err := os.ReadFile(confFile)
	if err != nil {
		return err
	}
	var m map[string]interface{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	// Prepare: the VF's PCI address at the top level; Attach: the default name.
	m["deviceID"] = os.Getenv("DEVICE_ID")
	if n, ok := m["name"]; !ok || n == "" {
		m["name"] = draDriverName
	}
	b, _ := json.Marshal(m)
	conf, err := libcni.ConfFromBytes(b)
	if err != nil {
		return fmt.Errorf("failed to NetworkPluginConfFromBytes: %v", err)
	}
	id := os.Getenv("CONTAINER_ID")
	rt := &libcni.RuntimeConf{
		ContainerID: id,
		NetNS:       netns,
		IfName:      os.Getenv("CNI_IFNAME"),
		Args: [][2]string{
			{"IgnoreUnknown", "true"},
			{"K8S_POD_NAMESPACE", os.Getenv("POD_NAMESPACE")},
			{"K8S_POD_NAME", os.Getenv("POD_NAME")},
			{"K8S_POD_INFRA_CONTAINER_ID", id},
			{"K8S_POD_UID", os.Getenv("POD_UID")},
		},
	}
	cni := libcni.NewCNIConfigWithCacheDir(filepath.SplitList(os.Getenv("CNI_PATH")), os.Getenv("CNI_CACHE_DIR"), nil)
	ctx := context.Background()
	if cmd == "del" {
		if err := cni.DelNetwork(ctx, conf, rt); err != nil {
			return fmt.Errorf("failed to DelNetwork: %v", err)
		}
		return nil
	}
	r, err := cni.AddNetwork(ctx, conf, rt)
	if err != nil {
		return fmt.Errorf("failed to AddNetwork: %v", err)
	}
	res, err := cni100.NewResultFromResult(r)
	if err != nil {
		return fmt.Errorf("failed to NewResultFromResult result (%v): %v", r, err)
	}
	var nd networkData
	for _, ip := range res.IPs {
		nd.IPs = append(nd.IPs, ip.Address.String())
	}
	for _, iface := range res.Interfaces {
		if iface.Sandbox != "" {
			nd.InterfaceName = iface.Name
			nd.HardwareAddress = iface.Mac
		}
	}
	out, _ := json.Marshal(nd)
	fmt.Println(string(out))
	return nil
}

type cachedAttachment struct {
	Kind           string                 `json:"kind"`
	ContainerID    string                 `json:"containerId"`
	IfName         string                 `json:"ifName"`
	NetworkName    string                 `json:"networkName"`
	CniArgs        [][2]string            `json:"cniArgs,omitempty"`
	CapabilityArgs map[string]interface{} `json:"capabilityArgs,omitempty"`
}

type gcAttachment struct {
	ContainerID string `json:"containerID"`
	IfName      string `json:"ifname"`
}

func runGC(listFile string) error {
	list, err := libcni.ConfListFromFile(listFile)
	if err != nil {
		return err
	}
	var valid []gcAttachment
	if err := json.Unmarshal([]byte(os.Getenv("VALID_ATTACHMENTS")), &valid); err != nil {
		return fmt.Errorf("VALID_ATTACHMENTS: %v", err)
	}
	isValid := map[gcAttachment]bool{}
	for _, a := range valid {
		isValid[a] = true
	}
	path := filepath.SplitList(os.Getenv("CNI_PATH"))
	cacheDir := os.Getenv("CNI_CACHE_DIR")
	cni := libcni.NewCNIConfigWithCacheDir(path, cacheDir, nil)
	ctx := context.Background()
	var errs []error

	// libcni 1.1.2 reads cached results up to 1.0.0, where 1.2+ DELs at the
	// list's own version: the DELs below go out at 1.0.0.
	delList := list
	if ok, _ := version.GreaterThanOrEqualTo(list.CNIVersion, "1.1.0"); ok {
		var raw map[string]interface{}
		if err := json.Unmarshal(list.Bytes, &raw); err != nil {
			return err
		}
		raw["cniVersion"] = "1.0.0"
		b, _ := json.Marshal(raw)
		if delList, err = libcni.ConfListFromBytes(b); err != nil {
			return err
		}
	}

	// Attachments libcni cached for this network that the runtime no longer has.
	files, _ := filepath.Glob(filepath.Join(cacheDir, "results", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var a cachedAttachment
		if json.Unmarshal(b, &a) != nil || a.Kind != "cniCacheV1" || a.NetworkName != list.Name {
			continue
		}
		if isValid[gcAttachment{a.ContainerID, a.IfName}] {
			continue
		}
		rt := &libcni.RuntimeConf{ContainerID: a.ContainerID, IfName: a.IfName, Args: a.CniArgs, CapabilityArgs: a.CapabilityArgs}
		if err := cni.DelNetworkList(ctx, delList, rt); err != nil {
			errs = append(errs, fmt.Errorf("failed to delete stale attachment %s %s: %w", a.ContainerID, a.IfName, err))
		}
	}

	if ok, _ := version.GreaterThanOrEqualTo(list.CNIVersion, "1.1.0"); !ok {
		return joinErrors(errs)
	}
	inject := map[string]interface{}{
		"name":                      list.Name,
		"cniVersion":                list.CNIVersion,
		"cni.dev/valid-attachments": valid,
		"cni.dev/attachments":       valid,
	}
	for _, plugin := range list.Plugins {
		conf, err := libcni.InjectConf(plugin, inject)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pluginPath, err := invoke.FindInPath(plugin.Network.Type, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		args := &invoke.Args{Command: "GC", Path: strings.Join(path, ":")}
		if err := invoke.ExecPluginWithoutResult(ctx, pluginPath, conf.Bytes, args, nil); err != nil {
			errs = append(errs, fmt.Errorf("failed to GC plugin %s: %w", plugin.Network.Type, err))
		}
	}
	return joinErrors(errs)
}

// joinErrors: Go 1.19 has no errors.Join.
func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "\n"))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "multus: %v\n", err)
	var cniErr *types.Error
	if errors.As(err, &cniErr) {
		if out, jerr := json.Marshal(cniErr); jerr == nil {
			fmt.Println(string(out))
		}
	}
	os.Exit(1)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: multus thin | thick DAEMON_CONFIG | dra add|del CONF NETNS | gc CONFLIST")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "thin":
		runMultus(false, "")
	case "thick":
		if len(os.Args) != 3 {
			usage()
		}
		runMultus(true, os.Args[2])
	case "dra":
		if len(os.Args) != 5 || (os.Args[2] != "add" && os.Args[2] != "del") {
			usage()
		}
		if err := runDRA(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fail(err)
		}
	case "gc":
		if len(os.Args) != 3 {
			usage()
		}
		if err := runGC(os.Args[2]); err != nil {
			fail(err)
		}
	default:
		usage()
	}
}
