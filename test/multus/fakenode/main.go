// SPDX-License-Identifier: Apache-2.0
//
// fakenode: what Multus talks to on a node, faked for the tests of
// test/multus: a Kubernetes API server (HTTPS, bearer token, self-signed
// CA) holding pods and NetworkAttachmentDefinitions, and the kubelet's
// pod-resources gRPC endpoint (a unix socket) telling which device of a
// resource each pod was given.
//
// It is built inside Multus's own module tree (test/multus/build.sh), so it
// uses the client-go, apimachinery and podresources v1 API Multus vendors.
//
//	fakenode -dir DIR -token TOKEN -podres SOCKET
//
// Objects are files the test writes and removes:
//
//	DIR/objects/pods/NS/NAME.json    a v1 Pod; its annotation
//	                                 "fake.test/devices" ({"RESOURCE": ["ID",...]})
//	                                 is what the pod-resources endpoint reports
//	DIR/objects/nads/NS/NAME.json    a k8s.cni.cncf.io/v1 NetworkAttachmentDefinition
//
// The server looks at them every 50 ms; a new, changed or removed file is an
// ADDED, MODIFIED or DELETED event for the watchers (the thick daemon's
// informers). What clients change (Multus's network-status updates) is
// written to DIR/current/pods/NS/NAME.json; the events clients post are
// appended to DIR/events.log, one JSON object a line; every request is a
// line of DIR/requests.log. DIR/ca.crt and DIR/addr (host:port) are written
// once the server listens.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"k8s.io/client-go/kubernetes/scheme"
	podresources "k8s.io/kubelet/pkg/apis/podresources/v1"
)

type object = map[string]interface{}

type event struct {
	rv   int64
	kind string // "pods" or "nads"
	typ  string // ADDED, MODIFIED, DELETED
	obj  object
}

type store struct {
	mu      sync.Mutex
	cond    *sync.Cond
	rv      int64
	objs    map[string]map[string]object // kind -> "ns/name" -> object
	seen    map[string]string            // file path -> content last loaded
	events  []event
	dir     string
	reqLog  *os.File
	evLog   *os.File
	closing bool
}

func newStore(dir string) *store {
	s := &store{
		objs: map[string]map[string]object{"pods": {}, "nads": {}},
		seen: map[string]string{},
		dir:  dir,
	}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func meta(o object) object {
	m, _ := o["metadata"].(object)
	if m == nil {
		m = object{}
		o["metadata"] = m
	}
	return m
}

func key(o object) string {
	m := meta(o)
	return fmt.Sprintf("%v/%v", m["namespace"], m["name"])
}

// record bumps the resource version, stamps o and queues the event. Locked.
func (s *store) record(kind, typ string, o object) {
	s.rv++
	m := meta(o)
	m["resourceVersion"] = strconv.FormatInt(s.rv, 10)
	if m["uid"] == nil {
		m["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", s.rv)
	}
	if m["creationTimestamp"] == nil {
		m["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	}
	s.events = append(s.events, event{s.rv, kind, typ, clone(o)})
	s.cond.Broadcast()
	if kind == "pods" && typ != "DELETED" {
		s.writeCurrent(o)
	}
}

func (s *store) writeCurrent(o object) {
	m := meta(o)
	dir := filepath.Join(s.dir, "current", "pods", fmt.Sprint(m["namespace"]))
	_ = os.MkdirAll(dir, 0o755)
	b, _ := json.MarshalIndent(o, "", "  ")
	tmp := filepath.Join(dir, fmt.Sprint(m["name"])+".json.tmp")
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, filepath.Join(dir, fmt.Sprint(m["name"])+".json"))
	}
}

// decode reads a request body as client-go sends it: JSON, or protobuf for
// the built-in types (pods, events).
func decode(body []byte) (object, error) {
	var o object
	if err := json.Unmarshal(body, &o); err == nil {
		return o, nil
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	err = json.Unmarshal(b, &o)
	return o, err
}

func clone(o object) object {
	b, _ := json.Marshal(o)
	var c object
	_ = json.Unmarshal(b, &c)
	return c
}

// scan loads the object files: new, changed and removed ones become events.
func (s *store) scan() {
	found := map[string]bool{}
	for _, kind := range []string{"pods", "nads"} {
		files, _ := filepath.Glob(filepath.Join(s.dir, "objects", kind, "*", "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			found[f] = true
			s.mu.Lock()
			if s.seen[f] == string(b) {
				s.mu.Unlock()
				continue
			}
			var o object
			if err := json.Unmarshal(b, &o); err != nil {
				s.mu.Unlock()
				continue // half written: the next scan reads it whole
			}
			s.seen[f] = string(b)
			m := meta(o)
			m["namespace"] = filepath.Base(filepath.Dir(f))
			m["name"] = strings.TrimSuffix(filepath.Base(f), ".json")
			k := key(o)
			typ := "ADDED"
			if old, ok := s.objs[kind][k]; ok {
				typ = "MODIFIED"
				if meta(o)["uid"] == nil {
					meta(o)["uid"] = meta(old)["uid"]
				}
			}
			s.objs[kind][k] = o
			s.record(kind, typ, o)
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	for f := range s.seen {
		if found[f] {
			continue
		}
		delete(s.seen, f)
		kind := filepath.Base(filepath.Dir(filepath.Dir(f)))
		k := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		if o, ok := s.objs[kind][k]; ok {
			delete(s.objs[kind], k)
			s.record(kind, "DELETED", o)
			if kind == "pods" {
				_ = os.Remove(filepath.Join(s.dir, "current", "pods", k+".json"))
			}
		}
	}
	s.mu.Unlock()
}

type server struct {
	s     *store
	token string
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, object{"kind": "Status", "apiVersion": "v1", "metadata": object{},
		"status": "Failure", "reason": reason, "message": msg, "code": code})
}

var kinds = map[string]struct{ kind, list, apiVersion string }{
	"pods": {"Pod", "PodList", "v1"},
	"nads": {"NetworkAttachmentDefinition", "NetworkAttachmentDefinitionList", "k8s.cni.cncf.io/v1"},
}

func matches(kind string, o object, ns, nodeName string) bool {
	if ns != "" && meta(o)["namespace"] != ns {
		return false
	}
	if nodeName != "" && kind == "pods" {
		spec, _ := o["spec"].(object)
		if spec == nil || spec["nodeName"] != nodeName {
			return false
		}
	}
	return true
}

func (v *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v.s.mu.Lock()
	fmt.Fprintf(v.s.reqLog, "%s %s %s\n", r.Method, r.URL.RequestURI(), r.UserAgent())
	v.s.mu.Unlock()
	if v.token != "" && r.Header.Get("Authorization") != "Bearer "+v.token {
		status(w, 401, "Unauthorized", "Unauthorized")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// /api/v1/... or /apis/GROUP/VERSION/...
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api" && parts[1] == "v1":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
		if parts[1] == "events.k8s.io" {
			rest = append([]string{}, rest...)
		}
	default:
		writeJSON(w, 200, object{"kind": "APIVersions", "versions": []string{"v1"}})
		return
	}
	ns := ""
	if len(rest) >= 2 && rest[0] == "namespaces" {
		ns = rest[1]
		rest = rest[2:]
	}
	if len(rest) == 0 {
		status(w, 404, "NotFound", "no resource")
		return
	}
	res := rest[0]
	if res == "events" {
		o, err := decode(body)
		if err != nil || o == nil {
			o = object{"undecoded": string(body)}
		}
		line, _ := json.Marshal(o)
		v.s.mu.Lock()
		fmt.Fprintf(v.s.evLog, "%s\n", line)
		v.s.mu.Unlock()
		writeJSON(w, 201, o)
		return
	}
	kind := map[string]string{"pods": "pods", "network-attachment-definitions": "nads"}[res]
	if kind == "" {
		status(w, 404, "NotFound", "the server could not find the requested resource")
		return
	}
	k := kinds[kind]
	if len(rest) == 1 { // list or watch
		q := r.URL.Query()
		node := ""
		if fs := q.Get("fieldSelector"); strings.HasPrefix(fs, "spec.nodeName=") {
			node = strings.TrimPrefix(fs, "spec.nodeName=")
		}
		if q.Get("watch") == "true" || q.Get("watch") == "1" {
			from, _ := strconv.ParseInt(q.Get("resourceVersion"), 10, 64)
			v.watch(w, r, kind, ns, node, from, q.Get("timeoutSeconds"))
			return
		}
		v.s.mu.Lock()
		items := []object{}
		for _, o := range v.s.objs[kind] {
			if matches(kind, o, ns, node) {
				c := clone(o)
				c["kind"], c["apiVersion"] = k.kind, k.apiVersion
				items = append(items, c)
			}
		}
		rv := v.s.rv
		v.s.mu.Unlock()
		writeJSON(w, 200, object{"kind": k.list, "apiVersion": k.apiVersion,
			"metadata": object{"resourceVersion": strconv.FormatInt(rv, 10)}, "items": items})
		return
	}
	name := rest[1]
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	o, ok := v.s.objs[kind][ns+"/"+name]
	if !ok {
		status(w, 404, "NotFound", fmt.Sprintf("%s %q not found", res, name))
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut, http.MethodPatch:
		if kind != "pods" {
			status(w, 405, "MethodNotAllowed", "read-only here")
			return
		}
		in, err := decode(body)
		if err != nil {
			status(w, 400, "BadRequest", "body: "+err.Error())
			return
		}
		// What Multus changes is the annotations: take them from a PUT
		// whole, merge them from a (merge or strategic) PATCH.
		im := meta(in)
		ann, _ := im["annotations"].(object)
		if r.Method == http.MethodPut {
			meta(o)["annotations"] = ann
		} else if ann != nil {
			cur, _ := meta(o)["annotations"].(object)
			if cur == nil {
				cur = object{}
			}
			for a, val := range ann {
				if val == nil {
					delete(cur, a)
				} else {
					cur[a] = val
				}
			}
			meta(o)["annotations"] = cur
		}
		v.s.record(kind, "MODIFIED", o)
	default:
		status(w, 405, "MethodNotAllowed", r.Method)
		return
	}
	c := clone(o)
	c["kind"], c["apiVersion"] = k.kind, k.apiVersion
	writeJSON(w, 200, c)
}

func (v *server) watch(w http.ResponseWriter, r *http.Request, kind, ns, node string, from int64, timeout string) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	if fl != nil {
		fl.Flush()
	}
	secs, err := strconv.Atoi(timeout)
	if err != nil || secs <= 0 {
		secs = 300
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(secs)*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); v.s.mu.Lock(); v.s.cond.Broadcast(); v.s.mu.Unlock() }()
	k := kinds[kind]
	enc := json.NewEncoder(w)
	next := 0
	v.s.mu.Lock()
	for {
		for ; next < len(v.s.events); next++ {
			e := v.s.events[next]
			if e.rv <= from || e.kind != kind || !matches(kind, e.obj, ns, node) {
				continue
			}
			c := clone(e.obj)
			c["kind"], c["apiVersion"] = k.kind, k.apiVersion
			v.s.mu.Unlock()
			err := enc.Encode(object{"type": e.typ, "object": c})
			if fl != nil {
				fl.Flush()
			}
			v.s.mu.Lock()
			if err != nil {
				v.s.mu.Unlock()
				return
			}
		}
		if ctx.Err() != nil || v.s.closing {
			v.s.mu.Unlock()
			return
		}
		v.s.cond.Wait()
	}
}

// The kubelet's pod-resources endpoint.
type podres struct {
	podresources.UnimplementedPodResourcesListerServer
	s *store
}

func (p *podres) resources(o object) *podresources.PodResources {
	m := meta(o)
	pr := &podresources.PodResources{Name: fmt.Sprint(m["name"]), Namespace: fmt.Sprint(m["namespace"])}
	ctr := &podresources.ContainerResources{Name: "c"}
	ann, _ := m["annotations"].(object)
	if raw, ok := ann["fake.test/devices"].(string); ok {
		var devs map[string][]string
		if json.Unmarshal([]byte(raw), &devs) == nil {
			for res, ids := range devs {
				ctr.Devices = append(ctr.Devices, &podresources.ContainerDevices{ResourceName: res, DeviceIds: ids})
			}
		}
	}
	pr.Containers = []*podresources.ContainerResources{ctr}
	return pr
}

func (p *podres) List(ctx context.Context, _ *podresources.ListPodResourcesRequest) (*podresources.ListPodResourcesResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	fmt.Fprintf(p.s.reqLog, "GRPC List\n")
	resp := &podresources.ListPodResourcesResponse{}
	for _, o := range p.s.objs["pods"] {
		resp.PodResources = append(resp.PodResources, p.resources(o))
	}
	return resp, nil
}

func (p *podres) Get(ctx context.Context, req *podresources.GetPodResourcesRequest) (*podresources.GetPodResourcesResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	fmt.Fprintf(p.s.reqLog, "GRPC Get %s/%s\n", req.PodNamespace, req.PodName)
	o, ok := p.s.objs["pods"][req.PodNamespace+"/"+req.PodName]
	if !ok {
		return nil, fmt.Errorf("pod %s/%s not found", req.PodNamespace, req.PodName)
	}
	return &podresources.GetPodResourcesResponse{PodResources: p.resources(o)}, nil
}

func (p *podres) GetAllocatableResources(context.Context, *podresources.AllocatableResourcesRequest) (*podresources.AllocatableResourcesResponse, error) {
	return &podresources.AllocatableResourcesResponse{}, nil
}

func selfSigned(dir string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "fakenode-apiserver"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost", "kubernetes.default.svc"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func main() {
	dir := flag.String("dir", "", "state directory")
	token := flag.String("token", "", "bearer token clients must send")
	sock := flag.String("podres", "", "pod-resources unix socket to serve")
	flag.Parse()
	if *dir == "" {
		log.Fatal("fakenode: -dir is required")
	}
	s := newStore(*dir)
	var err error
	if s.reqLog, err = os.OpenFile(filepath.Join(*dir, "requests.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		log.Fatal(err)
	}
	if s.evLog, err = os.OpenFile(filepath.Join(*dir, "events.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		log.Fatal(err)
	}
	s.scan()
	go func() {
		for {
			time.Sleep(50 * time.Millisecond)
			s.scan()
		}
	}()
	if *sock != "" {
		_ = os.Remove(*sock)
		l, err := net.Listen("unix", *sock)
		if err != nil {
			log.Fatalf("fakenode: pod-resources socket: %v", err)
		}
		g := grpc.NewServer()
		podresources.RegisterPodResourcesListerServer(g, &podres{s: s})
		go func() { _ = g.Serve(l) }()
	}
	cert, err := selfSigned(*dir)
	if err != nil {
		log.Fatalf("fakenode: certificate: %v", err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		log.Fatalf("fakenode: listen: %v", err)
	}
	addr := l.Addr().String()
	if err := os.WriteFile(filepath.Join(*dir, "addr.tmp"), []byte(addr+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(filepath.Join(*dir, "addr.tmp"), filepath.Join(*dir, "addr")); err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.Serve(l, &server{s: s, token: *token}))
}
