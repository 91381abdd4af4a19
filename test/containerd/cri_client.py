# SPDX-License-Identifier: Apache-2.0
"""The kubelet's side of the CRI, as much of it as a pod sandbox needs.

    cri_client.py STUBS SOCKET version
    cri_client.py STUBS SOCKET runp NAME [KEY=VALUE...]   (pod annotations)
    cri_client.py STUBS SOCKET status ID
    cri_client.py STUBS SOCKET stopp ID
    cri_client.py STUBS SOCKET rmp ID
    cri_client.py STUBS SOCKET pods

STUBS holds api_pb2.py and api_pb2_grpc.py, generated from the CRI API's
api.proto. Each call is made as the kubelet makes it (runtime v1), with a
deadline that is only a hang guard. Answers go to stdout as JSON (runp: the
sandbox id); a failed call prints the runtime's message to stderr and exits
1, so that a test can look for the plugin's words in it.
"""
import json
import sys

import grpc

# A hang guard, not a timing: a CNI ADD under valgrind on a busy machine
# takes seconds; the kubelet's own default is 4 minutes.
DEADLINE = 600


def main(argv):
    sys.path.insert(0, argv[1])
    import api_pb2 as pb  # noqa: E402 (generated at test time)
    import api_pb2_grpc as pbg  # noqa: E402

    channel = grpc.insecure_channel("unix://" + argv[2])
    rt = pbg.RuntimeServiceStub(channel)
    cmd, args = argv[3], argv[4:]

    if cmd == "version":
        r = rt.Version(pb.VersionRequest(version="v1"), timeout=DEADLINE)
        print(json.dumps({"runtime": r.runtime_name, "version": r.runtime_version,
                          "api": r.runtime_api_version}))
    elif cmd == "runp":
        name = args[0]
        annotations = dict(a.split("=", 1) for a in args[1:])
        config = pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=name, namespace="ctrd",
                                           uid="uid-" + name, attempt=0),
            hostname=name,
            annotations=annotations,
            labels={"io.kubernetes.pod.name": name},
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent=annotations.get("test/cgroup-parent", ""),
                security_context=pb.LinuxSandboxSecurityContext(
                    namespace_options=pb.NamespaceOption(network=pb.POD))))
        r = rt.RunPodSandbox(pb.RunPodSandboxRequest(config=config), timeout=DEADLINE)
        print(r.pod_sandbox_id)
    elif cmd == "status":
        r = rt.PodSandboxStatus(pb.PodSandboxStatusRequest(pod_sandbox_id=args[0], verbose=True),
                                timeout=DEADLINE)
        info = json.loads(r.info.get("info", "{}"))
        spec_ns = info.get("runtimeSpec", {}).get("linux", {}).get("namespaces", [])
        netns = [n.get("path", "") for n in spec_ns if n.get("type") == "network"]
        print(json.dumps({
            "id": r.status.id,
            "state": pb.PodSandboxState.Name(r.status.state),
            "ip": r.status.network.ip,
            "additional_ips": [i.ip for i in r.status.network.additional_ips],
            "netns": netns[0] if netns else "",
            "pid": info.get("pid", 0),
        }))
    elif cmd == "stopp":
        rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=args[0]), timeout=DEADLINE)
    elif cmd == "rmp":
        rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=args[0]), timeout=DEADLINE)
    elif cmd == "pods":
        r = rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=DEADLINE)
        print(json.dumps([{"id": p.id, "name": p.metadata.name,
                           "state": pb.PodSandboxState.Name(p.state)} for p in r.items]))
    else:
        print("cri_client.py: unknown command " + cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except grpc.RpcError as e:
        print("%s: %s" % (e.code().name, e.details()), file=sys.stderr)
        sys.exit(1)
