/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "conf.h"

static cJSON *conf;

static const cJSON *ipam(void)
{
	return cJSON_GetObjectItemCaseSensitive(conf, "ipam");
}

static void test_edit_distance(void)
{
	CHECK_INT(conf_edit_distance("rangeStart", "rangeStart", 2), 0);
	CHECK_INT(conf_edit_distance("rangeStrat", "rangeStart", 2), 2);
	CHECK_INT(conf_edit_distance("RANGESTART", "rangeStart", 2), 0);
	CHECK_INT(conf_edit_distance("vlna", "vlan", 5), 2);
	CHECK_INT(conf_edit_distance("deviceid", "deviceID", 2), 0);
	CHECK_INT(conf_edit_distance("kitten", "sitting", 5), 3);
	/* Capped: beyond cap the answer is cap + 1, however far. */
	CHECK_INT(conf_edit_distance("kitten", "sitting", 2), 3);
	CHECK_INT(conf_edit_distance("a", "completelydifferent", 2), 3);
	CHECK_INT(conf_edit_distance("", "ab", 2), 2);
}

static const char *const known[] = {
	"type", "rangeStart", "rangeEnd", "subnet", "gateway", "routes", "dataDir", NULL,
};

static int check_keys(const char *json, struct cni_error *err)
{
	cJSON *o = cJSON_Parse(json);
	int r;

	memset(err, 0, sizeof(*err));
	r = conf_check_keys(o, "ipam", known, err);
	cJSON_Delete(o);
	return r;
}

static void test_typo_detected(void)
{
	struct cni_error err;

	CHECK_INT(check_keys("{\"type\":\"pool-ipam\",\"rangeStrat\":\"10.0.0.10\"}", &err), -EINVAL);
	CHECK_INT(err.code, CNI_ERR_INVALID_CONFIG);
	CHECK_STR(err.msg, "ipam.rangeStrat: unknown key; did you mean \"rangeStart\"?");
	CHECK(check_keys("{\"gatway\":\"10.0.0.1\"}", &err) != 0);
	CHECK_HAS(err.msg, "did you mean \"gateway\"");
	CHECK(check_keys("{\"dataDir\":\"/x\",\"tipe\":\"a\"}", &err) != 0);
	CHECK_HAS(err.msg, "ipam.tipe");
}

/* The spec's names, exactly: a known key in another case is refused, named as written. */
static void test_case_refused(void)
{
	struct cni_error err;
	static const char *const rt[] = { "deviceID", "ips", NULL };
	const char *as;
	cJSON *o;

	CHECK_INT(check_keys("{\"type\":\"x\",\"DATADIR\":\"/x\"}", &err), -EINVAL);
	CHECK_INT(err.code, CNI_ERR_INVALID_CONFIG);
	CHECK_STR(err.msg, "ipam.DATADIR: keys are case-sensitive; write \"dataDir\"");
	CHECK_INT(check_keys("{\"Type\":\"x\"}", &err), -EINVAL);
	CHECK_STR(err.msg, "ipam.Type: keys are case-sensitive; write \"type\"");
	/* runtimeConfig carries other plugins' capabilities: only the case is checked there. */
	o = cJSON_Parse("{\"dns\":{},\"portMappings\":[],\"DeviceID\":\"0000:3b:02.1\"}");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_check_case(o, "runtimeConfig", rt, &err), -EINVAL);
	CHECK_STR(err.msg, "runtimeConfig.DeviceID: keys are case-sensitive; write \"deviceID\"");
	CHECK(conf_member(o, "deviceID") == NULL);
	/* DEL and GC may still find it, to release what an older ADD reserved. */
	CHECK(conf_member_any_case(o, "deviceID", &as) != NULL);
	CHECK_STR(as, "DeviceID");
	CHECK(conf_member_any_case(o, "dns", &as) != NULL);
	CHECK_STR(as, "dns");
	cJSON_Delete(o);
	o = cJSON_Parse("{\"dns\":{},\"ips\":[]}");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_check_case(o, "runtimeConfig", rt, &err), 0);
	cJSON_Delete(o);
}

static void test_far_keys_pass(void)
{
	struct cni_error err;

	/* Keys of other plugins in the chain, and what Multus injects. */
	CHECK_INT(check_keys("{\"type\":\"x\",\"deviceID\":\"0000:3b:02.1\",\"pciBusID\":\"a\","
			     "\"capabilities\":{},\"range\":\"10.0.0.0/24\",\"ranges\":[],"
			     "\"exclude\":[],\"chainKey\":\"/x\"}", &err), 0);
	CHECK_INT(err.code, 0);
	/* A short key two edits from a short known one is not a typo: "tap" vs "type"... */
	CHECK_INT(conf_edit_distance("tap", "type", 2), 2);
	CHECK_INT(check_keys("{\"tap\":3,\"mtu\":1500}", &err), 0);
	/* ...one edit is. */
	CHECK(check_keys("{\"typ\":\"x\"}", &err) != 0);
	CHECK_HAS(err.msg, "did you mean \"type\"");
	CHECK_INT(check_keys("{}", &err), 0);
}

static void test_type_errors_name_path(void)
{
	struct cni_error err = { 0 };
	const char *s = NULL;
	const cJSON *o;
	long long v;
	bool b, present;
	int onoff = -1;

	CHECK_INT(conf_string(ipam(), "ipam", "rangeStart", &s, false, &err), -EINVAL);
	CHECK_STR(err.msg, "ipam.rangeStart: must be a string (got a number)");
	memset(&err, 0, sizeof(err));
	/* A key in another case is not the key: absent. */
	o = cJSON_Parse("{\"VlanQos\": 9}");
	v = 5;
	CHECK_INT(conf_int(o, "", "vlanQoS", 0, 7, &v, NULL, &err), 0);
	CHECK_INT(v, 5);
	cJSON_Delete((cJSON *)o);
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(conf, "", "vlan", 0, 4094, &v, &present, &err), -EINVAL);
	CHECK_STR(err.msg, "vlan: 4095 is out of range (0-4094)");
	CHECK(!present);
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(conf, "", "mtu", 68, 65535, &v, NULL, &err), -EINVAL);
	CHECK_HAS(err.msg, "mtu: must be a number, not a string");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(conf, "", "vlanQoS", 0, 7, &v, NULL, &err), -EINVAL);
	CHECK_HAS(err.msg, "vlanQoS: must be an integer (got 1.5)");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_onoff(conf, "", "spoofchk", &onoff, &err), -EINVAL);
	CHECK_STR(err.msg, "spoofchk: must be \"on\" or \"off\" (got \"yes\")");
	CHECK_INT(onoff, -1);
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_bool(conf, "", "rdmaIsolation", &b, &present, &err), -EINVAL);
	CHECK_HAS(err.msg, "rdmaIsolation: must be true or false");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_string(conf, "", "pfName", &s, true, &err), -EINVAL);
	CHECK_STR(err.msg, "pfName: is required");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_object(conf, "", "runtimeConfig", &o, &err), -EINVAL);
	CHECK_HAS(err.msg, "runtimeConfig: must be an object (got an array)");
	CHECK(o == NULL);
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_array(ipam(), "ipam", "routes", &o, &err), -EINVAL);
	CHECK_HAS(err.msg, "ipam.routes: must be an array (got an object)");
}

static void test_reads_and_absent(void)
{
	struct cni_error err = { 0 };
	const char *s = "unchanged";
	long long v = 42;
	bool b = false, present = true;
	int onoff = -1, idx = 7;
	const cJSON *o = NULL;
	static const char *const protos[] = { "802.1q", "802.1ad", NULL };

	CHECK_INT(conf_string(ipam(), "ipam", "type", &s, true, &err), 0);
	CHECK_STR(s, "pool-ipam");
	CHECK_INT(conf_int(conf, "", "maxTxRate", 0, 100000, &v, &present, &err), 0);
	CHECK_INT(v, 1000);
	CHECK(present);
	/* Absent: success, output untouched, present false. */
	s = "unchanged";
	CHECK_INT(conf_string(conf, "", "mac", &s, false, &err), 0);
	CHECK_STR(s, "unchanged");
	CHECK_INT(conf_int(conf, "", "minTxRate", 0, 10, &v, &present, &err), 0);
	CHECK_INT(v, 1000);
	CHECK(!present);
	/* null is as good as absent, as in Go's decoder. */
	CHECK_INT(conf_string(conf, "", "logFile", &s, false, &err), 0);
	CHECK_STR(s, "unchanged");
	CHECK_INT(conf_bool(conf, "", "dpdk", &b, &present, &err), 0);
	CHECK(b);
	CHECK(present);
	CHECK_INT(conf_onoff(conf, "", "trust", &onoff, &err), 0);
	CHECK_INT(onoff, 0);
	CHECK_INT(conf_onoff(conf, "", "linkTrust", &onoff, &err), 0);
	CHECK_INT(onoff, 1);
	CHECK_INT(conf_enum(conf, "", "vlanProto", protos, &idx, &err), 0);
	CHECK_INT(idx, 1);
	CHECK_INT(conf_enum(conf, "", "nothere", protos, &idx, &err), 0);
	CHECK_INT(idx, -1);
	CHECK_INT(conf_object(conf, "", "ipam", &o, &err), 0);
	CHECK(o == ipam());
	CHECK_INT(conf_object(conf, "", "nothere", &o, &err), 0);
	CHECK(o == NULL);
	/* Exactly the spec's names: "deviceid" is not "deviceID". */
	s = "unchanged";
	CHECK_INT(conf_string(conf, "", "deviceid", &s, false, &err), 0);
	CHECK_STR(s, "unchanged");
}

static void test_ranges_and_enum_errors(void)
{
	struct cni_error err = { 0 };
	long long v = 0;
	int idx;
	static const char *const states[] = { "auto", "enable", "disable", NULL };

	CHECK_INT(conf_int(conf, "", "maxTxRate", 0, 999, &v, NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "maxTxRate: 1000 is out of range (0-999)");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(conf, "", "negative", 0, 10, &v, NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "negative: -1 is out of range (0-10)");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(conf, "", "negative", -1, -1, &v, NULL, &err), 0);
	CHECK_INT(v, -1);
	CHECK_INT(conf_enum(conf, "", "link_state", states, &idx, &err), -EINVAL);
	CHECK_STR(err.msg, "link_state: must be one of \"auto\", \"enable\", \"disable\" (got \"up\")");
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(conf, "", "huge", 0, 10, &v, NULL, &err), -EINVAL);
	CHECK_HAS(err.msg, "huge: must be an integer");
}

/* Out of long long's range, a conversion is undefined (UBSan's float-cast-overflow): the range comes first. */
static void test_numbers_beyond_any_integer(void)
{
	static const char *const keys[] = { "huge", "neghuge", "inf", "neginf", NULL };
	cJSON *odd = cJSON_CreateObject();
	struct cni_error err;
	long long v = 42;

	for (int i = 0; keys[i]; i++) {
		memset(&err, 0, sizeof(err));
		CHECK_INT(conf_int(conf, "", keys[i], LLONG_MIN, LLONG_MAX, &v, NULL, &err), -EINVAL);
		CHECK_HAS(err.msg, "must be an integer");
	}
	/* No JSON text gives a NaN; a document built in code can. */
	cJSON_AddNumberToObject(odd, "nan", NAN);
	memset(&err, 0, sizeof(err));
	CHECK_INT(conf_int(odd, "", "nan", 0, 10, &v, NULL, &err), -EINVAL);
	CHECK_HAS(err.msg, "nan: must be an integer");
	CHECK_INT(v, 42);
	cJSON_Delete(odd);
}

int main(void)
{
	conf = cJSON_Parse("{"
		"\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"sriov-rdma\","
		"\"vlan\":4095,\"mtu\":\"9000\",\"vlanQoS\":1.5,\"spoofchk\":\"yes\","
		"\"rdmaIsolation\":\"true\",\"runtimeConfig\":[],\"maxTxRate\":1000,"
		"\"logFile\":null,\"dpdk\":true,\"trust\":\"off\",\"linkTrust\":true,"
		"\"vlanProto\":\"802.1AD\",\"DeviceID\":7,\"negative\":-1,"
		"\"link_state\":\"up\",\"huge\":1e300,\"neghuge\":-1e300,\"inf\":1e999,\"neginf\":-1e999,"
		"\"ipam\":{\"type\":\"pool-ipam\",\"rangeStart\":10,\"routes\":{}}}");
	RUN(test_edit_distance);
	RUN(test_typo_detected);
	RUN(test_far_keys_pass);
	RUN(test_case_refused);
	RUN(test_type_errors_name_path);
	RUN(test_reads_and_absent);
	RUN(test_ranges_and_enum_errors);
	RUN(test_numbers_beyond_any_integer);
	cJSON_Delete(conf);
	return check_summary();
}
