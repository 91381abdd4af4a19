// SPDX-License-Identifier: Apache-2.0

// kubeapi: a Kubernetes API server for tests, serving nvidia-k8s-ipam's
// IPPool and CIDRPool custom resources (group nv-ipam.nvidia.com, version
// v1alpha1) over HTTPS on loopback, with the paths, objects and Status
// answers the real API server gives.
//
//	kubeapi -out DIR -objects DIR -log FILE [-token TOKEN] [-listen ADDR]
//
// At start it makes a CA (ECDSA P-256), a server certificate for 127.0.0.1
// and a client certificate (CN "system:node:test", O "system:nodes"), writes
// ca.crt, client.crt and client.key into -out, listens, and writes the
// address it listens on ("127.0.0.1:PORT") to -out/addr once it serves.
//
// Objects are files -objects/NS/ippools/NAME.json and
// -objects/NS/cidrpools/NAME.json, read on every request. Switches, also
// read on every request so a test can flip them while the server runs:
//
//	-objects/.delay-ms  sleep that many milliseconds before answering
//	-objects/.drop      close the connection without an answer
//	-objects/.status    answer that HTTP status with a Status object
//
// A request is authenticated by "Authorization: Bearer TOKEN" or by a
// client certificate the CA signed; otherwise it gets 401. Each request is
// logged to -log as one line, "GET /path STATUS" ("dropped" for .drop).
package main

import (
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
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	group   = "nv-ipam.nvidia.com"
	version = "v1alpha1"
	prefix  = "/apis/" + group + "/" + version + "/"
)

// Resource names in the URL and the kinds of their objects and lists.
var kinds = map[string]string{"ippools": "IPPool", "cidrpools": "CIDRPool"}

// What the API server accepts as a namespace or object name (DNS-1123
// subdomain); anything else cannot name a file here.
var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

type server struct {
	objects string
	token   string
	logMu   sync.Mutex
	logFile *os.File
}

type certKey struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

func newCert(tmpl *x509.Certificate, parent *certKey) (*certKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certKey{cert: cert, der: der, key: key}, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0600)
}

// makeCerts writes ca.crt, client.crt and client.key into dir and returns
// the server's TLS certificate and the CA pool client certificates are
// verified against.
func makeCerts(dir string) (tls.Certificate, *x509.CertPool, error) {
	var none tls.Certificate
	ca, err := newCert(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "kubeapi-test-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return none, nil, err
	}
	srv, err := newCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
	if err != nil {
		return none, nil, err
	}
	client, err := newCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:node:test", Organization: []string{"system:nodes"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca)
	if err != nil {
		return none, nil, err
	}
	clientKey, err := x509.MarshalECPrivateKey(client.key)
	if err != nil {
		return none, nil, err
	}
	if err := writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", ca.der); err != nil {
		return none, nil, err
	}
	if err := writePEM(filepath.Join(dir, "client.crt"), "CERTIFICATE", client.der); err != nil {
		return none, nil, err
	}
	if err := writePEM(filepath.Join(dir, "client.key"), "EC PRIVATE KEY", clientKey); err != nil {
		return none, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	tlsCert := tls.Certificate{Certificate: [][]byte{srv.der, ca.der}, PrivateKey: srv.key}
	return tlsCert, pool, nil
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (s *server) logRequest(r *http.Request, result string) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	// One write per line on an unbuffered file: a reader never sees half a line.
	fmt.Fprintf(s.logFile, "%s %s %s\n", r.Method, r.URL.RequestURI(), result)
}

// The reasons the API server puts in Status objects for these codes.
var reasons = map[int]string{
	http.StatusUnauthorized:        "Unauthorized",
	http.StatusForbidden:           "Forbidden",
	http.StatusNotFound:            "NotFound",
	http.StatusMethodNotAllowed:    "MethodNotAllowed",
	http.StatusTooManyRequests:     "TooManyRequests",
	http.StatusInternalServerError: "InternalError",
	http.StatusServiceUnavailable:  "ServiceUnavailable",
	http.StatusGatewayTimeout:      "Timeout",
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	body, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		body = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"InternalError","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(body)
}

func writeStatus(w http.ResponseWriter, code int, message string, details map[string]interface{}) {
	st := map[string]interface{}{
		"kind":       "Status",
		"apiVersion": "v1",
		"metadata":   map[string]interface{}{},
		"status":     "Failure",
		"message":    message,
		"code":       code,
	}
	if reason, ok := reasons[code]; ok {
		st["reason"] = reason
	}
	if details != nil {
		st["details"] = details
	}
	writeJSON(w, code, st)
}

// The API server's answer to an authenticated identity that RBAC does not
// allow the request: Multus's service account without a role on nv-ipam.
func forbidden(w http.ResponseWriter, path string) {
	parts := strings.Split(strings.TrimPrefix(path, prefix), "/")
	ns, res, name := "", "resources", ""
	if len(parts) >= 3 && parts[0] == "namespaces" {
		ns, res = parts[1], parts[2]
	}
	if len(parts) == 4 {
		name = parts[3]
	}
	msg := fmt.Sprintf("%s.%s %q is forbidden: User \"system:serviceaccount:kube-system:multus\" "+
		"cannot get resource %q in API group %q in the namespace %q", res, group, name, res, group, ns)
	writeStatus(w, http.StatusForbidden, msg,
		map[string]interface{}{"name": name, "group": group, "kind": res})
}

func (s *server) switchFile(name string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(s.objects, name))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(data)), true
}

func (s *server) authenticated(r *http.Request) bool {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return true
	}
	auth := r.Header.Get("Authorization")
	return s.token != "" && auth == "Bearer "+s.token
}

// readObject reads NS/RES/NAME.json and fills in what the API server
// always returns (apiVersion, kind, name, namespace).
func (s *server) readObject(path, ns, res, name string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]interface{}
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	obj["apiVersion"] = group + "/" + version
	obj["kind"] = kinds[res]
	meta, _ := obj["metadata"].(map[string]interface{})
	if meta == nil {
		meta = map[string]interface{}{}
		obj["metadata"] = meta
	}
	meta["name"] = name
	meta["namespace"] = ns
	return obj, nil
}

func resourceVersion(obj map[string]interface{}) uint64 {
	meta, _ := obj["metadata"].(map[string]interface{})
	rv, _ := meta["resourceVersion"].(string)
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

// list answers NS's objects of res, or every namespace's when ns is "".
func (s *server) list(w http.ResponseWriter, ns, res string) {
	namespaces := []string{ns}
	if ns == "" {
		namespaces = nil
		entries, _ := os.ReadDir(s.objects)
		for _, e := range entries {
			if e.IsDir() && validName.MatchString(e.Name()) {
				namespaces = append(namespaces, e.Name())
			}
		}
	}
	sort.Strings(namespaces)
	items := []interface{}{}
	var maxRV uint64 = 1
	for _, n := range namespaces {
		dir := filepath.Join(s.objects, n, res)
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			name := strings.TrimSuffix(e.Name(), ".json")
			if !e.IsDir() && name != e.Name() && validName.MatchString(name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			obj, err := s.readObject(filepath.Join(dir, name+".json"), n, res, name)
			if err != nil {
				writeStatus(w, http.StatusInternalServerError, err.Error(), nil)
				return
			}
			if rv := resourceVersion(obj); rv > maxRV {
				maxRV = rv
			}
			items = append(items, obj)
		}
	}
	writeJSON(w, http.StatusOK, map[string]interface{}{
		"apiVersion": group + "/" + version,
		"kind":       kinds[res] + "List",
		"metadata":   map[string]interface{}{"continue": "", "resourceVersion": strconv.FormatUint(maxRV, 10)},
		"items":      items,
	})
}

func (s *server) get(w http.ResponseWriter, ns, res, name string) {
	obj, err := s.readObject(filepath.Join(s.objects, ns, res, name+".json"), ns, res, name)
	if os.IsNotExist(err) {
		writeStatus(w, http.StatusNotFound,
			fmt.Sprintf("%s.%s %q not found", res, group, name),
			map[string]interface{}{"name": name, "group": group, "kind": res})
		return
	}
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, err.Error(), nil)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

func (s *server) notFound(w http.ResponseWriter) {
	writeStatus(w, http.StatusNotFound, "the server could not find the requested resource",
		map[string]interface{}{})
}

// drop closes the connection without an answer. HTTP/2 connections cannot
// be hijacked: aborting the handler resets the stream instead.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

func (s *server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if ms, ok := s.switchFile(".delay-ms"); ok {
		n, _ := strconv.Atoi(ms)
		select {
		case <-time.After(time.Duration(n) * time.Millisecond):
		case <-r.Context().Done():
			s.logRequest(r, "gone")
			return
		}
	}
	if _, ok := s.switchFile(".drop"); ok {
		s.logRequest(r, "dropped")
		drop(rw)
		return
	}
	w := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
	defer func() { s.logRequest(r, strconv.Itoa(w.status)) }()

	if !s.authenticated(r) {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", nil)
		return
	}
	if code, ok := s.switchFile(".status"); ok {
		n, err := strconv.Atoi(code)
		if err != nil || n < 200 || n > 599 {
			n = http.StatusInternalServerError
		}
		if n == http.StatusForbidden {
			forbidden(w, r.URL.Path)
			return
		}
		writeStatus(w, n, http.StatusText(n), nil)
		return
	}
	if r.Method != http.MethodGet {
		writeStatus(w, http.StatusMethodNotAllowed,
			"the server does not allow this method on the requested resource", nil)
		return
	}
	if !strings.HasPrefix(r.URL.Path, prefix) {
		s.notFound(w)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/")
	switch {
	case len(parts) == 1 && kinds[parts[0]] != "":
		s.list(w, "", parts[0])
	case len(parts) == 3 && parts[0] == "namespaces" && validName.MatchString(parts[1]) &&
		kinds[parts[2]] != "":
		s.list(w, parts[1], parts[2])
	case len(parts) == 4 && parts[0] == "namespaces" && validName.MatchString(parts[1]) &&
		kinds[parts[2]] != "":
		if !validName.MatchString(parts[3]) {
			writeStatus(w, http.StatusNotFound,
				fmt.Sprintf("%s.%s %q not found", parts[2], group, parts[3]),
				map[string]interface{}{"name": parts[3], "group": group, "kind": parts[2]})
			return
		}
		s.get(w, parts[1], parts[2], parts[3])
	default:
		s.notFound(w)
	}
}

func main() {
	out := flag.String("out", "", "directory for ca.crt, client.crt, client.key and addr")
	objects := flag.String("objects", "", "directory of NS/RESOURCE/NAME.json objects and switches")
	logPath := flag.String("log", "", "request log, one line per request")
	token := flag.String("token", "", "bearer token accepted besides client certificates")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	log.SetPrefix("kubeapi: ")
	log.SetFlags(0)
	if *out == "" || *objects == "" || *logPath == "" {
		log.Fatal("-out, -objects and -log are required")
	}

	cert, pool, err := makeCerts(*out)
	if err != nil {
		log.Fatal(err)
	}
	logFile, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0600)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler: &server{objects: *objects, token: *token, logFile: logFile},
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    pool,
			MinVersion:   tls.VersionTLS12,
		},
		ErrorLog: log.New(os.Stderr, "kubeapi: ", 0),
	}
	// The address file appears whole (rename) once the socket accepts.
	addr := filepath.Join(*out, "addr")
	if err := os.WriteFile(addr+".tmp", []byte(ln.Addr().String()), 0600); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(addr+".tmp", addr); err != nil {
		log.Fatal(err)
	}
	log.Fatal(srv.ServeTLS(ln, "", ""))
}
