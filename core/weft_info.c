/* SPDX-License-Identifier: MIT */
/*
 * weft_info: what weft offers on this host, in the layout of libfabric's
 * fi_info. It uses only the public API (fi_getinfo, fi_tostr, fi_getparams),
 * so it reports exactly what an application would see. Names given on the
 * command line (FI_MSG, FI_EP_RDM, ...) are resolved through fi_tostr itself
 * rather than a second copy of the name tables.
 */
#include "weft/compat.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

struct info_args {
	struct fi_info *hints;
	int use_hints;
	const char *node;
	const char *service;
	const char *env_filter;	/* -g: only settings whose name has this */
	/* as in fi_info: -e wins over -v, which wins over -l; -l still asks
	 * fi_getinfo for provider attributes only */
	unsigned env : 1;
	unsigned verbose : 1;
	unsigned list : 1;
};

enum { OPT_VERSION = 256 };

static const struct option info_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "node", required_argument, NULL, 'n' },
	{ "service", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'P' },
	{ "caps", required_argument, NULL, 'c' },
	{ "mode", required_argument, NULL, 'm' },
	{ "ep_type", required_argument, NULL, 't' },
	{ "domain", required_argument, NULL, 'd' },
	{ "fabric", required_argument, NULL, 'f' },
	{ "addr_format", required_argument, NULL, 'a' },
	{ "provider", required_argument, NULL, 'p' },
	{ "env", no_argument, NULL, 'e' },
	{ "getenv", required_argument, NULL, 'g' },
	{ "list", no_argument, NULL, 'l' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void info_usage(FILE *out)
{
	fprintf(out,
		"Usage: weft_info [OPTION]...\n"
		"Show the fabric interfaces weft offers (fi_getinfo).\n\n"
		"  -h, --help\t\t\tdisplay this help and exit\n"
		"  -n, --node=NAME\t\tnode name or address\n"
		"  -s, --service=SERVICE\t\tservice name or port number (also -P, --port)\n"
		"  -c, --caps=CAP1|CAP2..\tone or more capabilities: FI_MSG|FI_RMA...\n"
		"  -m, --mode=MOD1|MOD2..\tone or more modes, default all modes\n"
		"  -t, --ep_type=EPTYPE\t\tspecify single endpoint type: FI_EP_MSG, FI_EP_DGRAM...\n"
		"  -d, --domain=DOMAIN\t\tspecify the domain name\n"
		"  -f, --fabric=FABRIC\t\tspecify the fabric name\n"
		"  -a, --addr_format=FMT\t\tspecify accepted address format: FI_FORMAT_UNSPEC, FI_SOCKADDR...\n"
		"  -p, --provider=PROV\t\tspecify provider explicitly\n"
		"  -e, --env\t\t\tprint every setting with its type, help and value\n"
		"  -g, --getenv=SUBSTR\t\tprint the settings whose name contains SUBSTR\n"
		"  -l, --list\t\t\tlist available providers\n"
		"  -v, --verbose\t\t\tverbose output (fi_tostr of each fi_info)\n"
		"  --version\t\t\tprint version info and exit\n");
}

/* ---- names -> values, through fi_tostr -------------------------------- */

/* The flag of `type` whose fi_tostr name is `name` (case-insensitive). */
static int info_lookup_flag(enum fi_type type, const char *name,
			    uint64_t *flag)
{
	char buf[64];
	uint64_t bit;
	int i;

	for (i = 0; i < 64; i++) {
		bit = 1ULL << i;
		if (fi_tostr_r(buf, sizeof(buf), &bit, type) &&
		    !strcasecmp(buf, name)) {
			*flag = bit;
			return 0;
		}
	}
	return -FI_EINVAL;
}

/* The 32-bit enum value of `type` (ep type, address format) named `name`. */
static int info_lookup_enum(enum fi_type type, const char *name,
			    uint32_t *value)
{
	char buf[64];
	uint32_t v;

	for (v = 0; v < 256; v++) {
		if (fi_tostr_r(buf, sizeof(buf), &v, type) &&
		    !strcasecmp(buf, name)) {
			*value = v;
			return 0;
		}
	}
	return -FI_EINVAL;
}

/* "A|B|C" -> flags; capabilities also accept operation flags (FI_MORE,
 * FI_PEEK), as fi_info does. */
static int info_parse_flags(const char *arg, enum fi_type type,
			    enum fi_type alt_type, const char *what,
			    uint64_t *flags)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint64_t flag;
	int ret = 0;

	if (!copy)
		return -FI_ENOMEM;
	for (tok = strtok_r(copy, "|", &save); tok;
	     tok = strtok_r(NULL, "|", &save)) {
		if (info_lookup_flag(type, tok, &flag) &&
		    (alt_type == type || info_lookup_flag(alt_type, tok, &flag))) {
			fprintf(stderr, "error: Unrecognized %s: %s\n", what, tok);
			ret = -FI_EINVAL;
			break;
		}
		*flags |= flag;
	}
	free(copy);
	return ret;
}

/* ---- output ------------------------------------------------------------ */

static const char *info_param_type(enum fi_param_type type)
{
	switch (type) {
	case FI_PARAM_STRING:
		return "String";
	case FI_PARAM_INT:
		return "Integer";
	case FI_PARAM_SIZE_T:
		return "size_t";
	case FI_PARAM_BOOL:
		return "Boolean (0/1, on/off, true/false, yes/no)";
	default:
		return "Unknown";
	}
}

/* fi_info -e layout: "# NAME: Type", "# help", then NAME=value when the
 * setting is set (quoted when it holds a space), then a blank line. */
static int info_print_params(const char *filter)
{
	struct fi_param *params;
	int ret, count, i;

	ret = fi_getparams(&params, &count);
	if (ret) {
		fprintf(stderr, "fi_getparams: %d (%s)\n", ret,
			fi_strerror(-ret));
		return ret;
	}
	for (i = 0; i < count; i++) {
		const struct fi_param *p = &params[i];
		const char *quote;

		if (filter && !strcasestr(p->name, filter))
			continue;
		printf("# %s: %s\n", p->name, info_param_type(p->type));
		printf("# %s\n", p->help_string ? p->help_string : "");
		if (p->value) {
			quote = strchr(p->value, ' ') ? "\"" : "";
			printf("%s=%s%s%s\n", p->name, quote, p->value, quote);
		}
		printf("\n");
	}
	fi_freeparams(params);
	return 0;
}

static void info_print_providers(const struct fi_info *info)
{
	for (; info; info = info->next) {
		printf("%s:\n", info->fabric_attr->prov_name);
		printf("    version: %d.%d\n",
		       FI_MAJOR(info->fabric_attr->prov_version),
		       FI_MINOR(info->fabric_attr->prov_version));
	}
}

static void info_print_short(const struct fi_info *info)
{
	for (; info; info = info->next) {
		printf("provider: %s\n", info->fabric_attr->prov_name);
		printf("    fabric: %s\n", info->fabric_attr->name);
		printf("    domain: %s\n", info->domain_attr->name);
		printf("    version: %d.%d\n",
		       FI_MAJOR(info->fabric_attr->prov_version),
		       FI_MINOR(info->fabric_attr->prov_version));
		printf("    type: %s\n",
		       fi_tostr(&info->ep_attr->type, FI_TYPE_EP_TYPE));
		printf("    protocol: %s\n",
		       fi_tostr(&info->ep_attr->protocol, FI_TYPE_PROTOCOL));
	}
}

static void info_print_verbose(const struct fi_info *info)
{
	for (; info; info = info->next) {
		printf("---\n");
		printf("%s", fi_tostr(info, FI_TYPE_INFO));
	}
}

static void info_print_version(void)
{
	uint32_t api = fi_version();

	printf("weft_info: %s\n", PACKAGE_VERSION);
	printf("libfabric: %s\n", fi_tostr("", FI_TYPE_VERSION));
	printf("libfabric api: %d.%d\n", FI_MAJOR(api), FI_MINOR(api));
}

static int info_run(const struct info_args *args)
{
	struct fi_info *info = NULL;
	uint64_t flags = 0;
	int ret;

	if (args->list)
		flags |= FI_PROV_ATTR_ONLY;
	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
			 args->node, args->service, flags,
			 args->use_hints ? args->hints : NULL, &info);
	/* -e lists settings even when no provider matches: fi_getinfo ran,
	 * so every provider has defined its settings by now */
	if (args->env) {
		fi_freeinfo(info);
		return info_print_params(args->env_filter);
	}
	if (ret) {
		fprintf(stderr, "fi_getinfo: %d (%s)\n", ret, fi_strerror(-ret));
		return ret;
	}

	if (args->verbose)
		info_print_verbose(info);
	else if (args->list)
		info_print_providers(info);
	else
		info_print_short(info);
	fi_freeinfo(info);
	return 0;
}

/* ---- command line ------------------------------------------------------ */

static int info_hints_alloc(struct info_args *args)
{
	args->hints = fi_allocinfo();
	if (!args->hints)
		return -FI_ENOMEM;
	/* as fi_info: accept every mode and memory registration mode unless
	 * the user narrows them */
	args->hints->mode = ~0ULL;
	args->hints->domain_attr->mode = ~0ULL;
	args->hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	return 0;
}

static int info_replace_str(char **dst, const char *src)
{
	free(*dst);
	*dst = strdup(src);
	return *dst ? 0 : -FI_ENOMEM;
}

/* Applies one option; returns 0, or -FI_EINVAL for a bad value. */
static int info_parse_opt(struct info_args *args, int op, const char *arg)
{
	struct fi_info *hints = args->hints;
	uint32_t value;
	int ret = 0;

	switch (op) {
	case 'n':
		args->node = arg;
		return 0;
	case 's':
	case 'P':
		args->service = arg;
		return 0;
	case 'c':
		ret = info_parse_flags(arg, FI_TYPE_CAPS, FI_TYPE_OP_FLAGS,
				       "capability", &hints->caps);
		break;
	case 'm':
		hints->mode = 0;
		ret = info_parse_flags(arg, FI_TYPE_MODE, FI_TYPE_MODE, "mode",
				       &hints->mode);
		break;
	case 't':
		ret = info_lookup_enum(FI_TYPE_EP_TYPE, arg, &value);
		if (ret)
			fprintf(stderr, "error: Unrecognized endpoint type: %s\n",
				arg);
		else
			hints->ep_attr->type = (enum fi_ep_type)value;
		break;
	case 'a':
		ret = info_lookup_enum(FI_TYPE_ADDR_FORMAT, arg, &value);
		if (ret)
			fprintf(stderr, "error: Unrecognized address format: %s\n",
				arg);
		else
			hints->addr_format = value;
		break;
	case 'p':
		ret = info_replace_str(&hints->fabric_attr->prov_name, arg);
		break;
	case 'd':
		ret = info_replace_str(&hints->domain_attr->name, arg);
		break;
	case 'f':
		ret = info_replace_str(&hints->fabric_attr->name, arg);
		break;
	case 'g':
		args->env_filter = arg;
		args->env = 1;
		return 0;
	case 'e':
		args->env = 1;
		return 0;
	case 'l':
		args->list = 1;
		return 0;
	case 'v':
		args->verbose = 1;
		return 0;
	default:
		return -FI_EINVAL;
	}
	if (!ret)
		args->use_hints = 1;
	return ret;
}

int main(int argc, char **argv)
{
	struct info_args args = { 0 };
	int op, ret;

	if (info_hints_alloc(&args)) {
		fprintf(stderr, "weft_info: out of memory\n");
		return EXIT_FAILURE;
	}

	while ((op = getopt_long(argc, argv, "hn:s:P:c:m:t:d:f:a:p:eg:lv",
				 info_longopts, NULL)) != -1) {
		switch (op) {
		case 'h':
			info_usage(stdout);
			ret = 0;
			goto free_hints;
		case OPT_VERSION:
			info_print_version();
			ret = 0;
			goto free_hints;
		default:
			ret = info_parse_opt(&args, op, optarg);
			if (ret) {
				info_usage(stderr);
				goto free_hints;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "weft_info: unexpected argument '%s'\n",
			argv[optind]);
		info_usage(stderr);
		ret = -FI_EINVAL;
		goto free_hints;
	}

	ret = info_run(&args);

free_hints:
	fi_freeinfo(args.hints);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
