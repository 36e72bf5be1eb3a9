// SPDX-License-Identifier: GPL-2.0
/*
 * sharness policy files: the [net] section.
 *
 *   connect = PROTO ADDRESS[/PREFIX] [PORT[-PORT]]  allowed; with any connect
 *                                                   rule, every other inet
 *                                                   destination is refused
 *   deny    = PROTO ADDRESS[/PREFIX] [PORT[-PORT]]  refused, even where a
 *                                                   broader connect allows
 *   bind    = PROTO ADDRESS[/PREFIX] [PORT[-PORT]]  allowed; with any bind
 *                                                   rule, other binds and
 *                                                   listens are refused
 *
 * PROTO is tcp, udp or any; ADDRESS an IPv4 or IPv6 address, or `any` (both
 * families); without PORT, every port (0-65535). Addresses are kept as
 * IPv6, IPv4 as ::ffff:a.b.c.d, so a mapped IPv6 destination is judged as
 * the IPv4 address it is. Where rules overlap, the most specific decides
 * (longest prefix, then narrowest port range; deny wins a tie).
 */
#include "policy_parse.h"
#include "sharness.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static const char *const net_keys[] = { [SH_NETR_CONNECT] = "connect",
					[SH_NETR_DENY] = "deny", [SH_NETR_BIND] = "bind" };

static bool parse_proto(const char *w, uint8_t *out)
{
	if (!strcmp(w, "tcp"))
		*out = SH_PROTO_TCP;
	else if (!strcmp(w, "udp"))
		*out = SH_PROTO_UDP;
	else if (!strcmp(w, "any"))
		*out = SH_PROTO_ANY;
	else
		return false;
	return true;
}

/* Do the first `bits` bits of a and b agree? */
static bool same_bits(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	for (unsigned i = 0; i < bits; i++) {
		uint8_t m = (uint8_t)(0x80 >> (i % 8));

		if ((a[i / 8] & m) != (b[i / 8] & m))
			return false;
	}
	return true;
}

/* "10.0.0.0/8", "2001:db8::/32", "any": into r->addr and r->prefix. */
static bool parse_addr(struct pctx *c, const char *w, struct sh_net_rule *r)
{
	char buf[64], q[QBUF], *slash, *end;
	uint8_t v4[4];
	unsigned max;

	if (!strcmp(w, "any")) {
		memset(r->addr, 0, sizeof(r->addr));
		r->prefix = 0;
		return true;
	}
	snprintf(buf, sizeof(buf), "%s", w);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (strlen(w) < sizeof(buf) && inet_pton(AF_INET, buf, v4) == 1) {
		memset(r->addr, 0, 10);
		r->addr[10] = r->addr[11] = 0xff;
		memcpy(r->addr + 12, v4, 4);
		max = 32;
	} else if (strlen(w) < sizeof(buf) && inet_pton(AF_INET6, buf, r->addr) == 1) {
		max = 128;
	} else {
		sh_perr(c, c->line, "bad address '%s' (want an IPv4 or IPv6 address, "
			"with /PREFIX or not, or any)", sh_policy_quote(q, sizeof(q), w));
		return false;
	}
	r->prefix = max;
	if (slash) {
		unsigned long n = strtoul(slash + 1, &end, 10);

		if (!slash[1] || *end || n > max) {
			sh_perr(c, c->line, "bad prefix length in '%s' (want 0..%u)",
				sh_policy_quote(q, sizeof(q), w), max);
			return false;
		}
		r->prefix = (unsigned)n;
	}
	if (max == 32)
		r->prefix += 96;
	/* Bits past the prefix must be zero: 10.1.2.3/8 is a mistake. */
	for (unsigned i = r->prefix; i < 128; i++)
		if (r->addr[i / 8] & (0x80 >> (i % 8))) {
			sh_perr(c, c->line, "'%s' has address bits set past its prefix",
				sh_policy_quote(q, sizeof(q), w));
			return false;
		}
	return true;
}

static bool parse_port(const char *s, char **end, uint16_t *out)
{
	unsigned long n;

	if (*s < '0' || *s > '9')
		return false;
	n = strtoul(s, end, 10);
	if (n > 65535)
		return false;
	*out = (uint16_t)n;
	return true;
}

/* "443", "3000-3999", or none (every port). */
static bool parse_ports(struct pctx *c, const char *w, struct sh_net_rule *r)
{
	char q[QBUF], *end = NULL;

	r->port_lo = 0;
	r->port_hi = 65535;
	if (!w)
		return true;
	if (parse_port(w, &end, &r->port_lo)) {
		r->port_hi = r->port_lo;
		if (*end == '-' && !parse_port(end + 1, &end, &r->port_hi))
			end = (char *)"x";
		if (!*end && r->port_lo <= r->port_hi)
			return true;
	}
	sh_perr(c, c->line, "bad port '%s' (want PORT or LOW-HIGH, 0..65535)",
		sh_policy_quote(q, sizeof(q), w));
	return false;
}

/* The same endpoints, of rules of the same trie (connect and deny share one). */
static bool same_match(const struct sh_net_rule *a, const struct sh_net_rule *b)
{
	return (a->kind == SH_NETR_BIND) == (b->kind == SH_NETR_BIND) && a->proto == b->proto &&
	       a->prefix == b->prefix && same_bits(a->addr, b->addr, 128) &&
	       a->port_lo == b->port_lo && a->port_hi == b->port_hi;
}

/* Stores r unless it repeats or contradicts an earlier rule (reported). */
static void store(struct pctx *c, const struct sh_net_rule *r, const char *v)
{
	struct sh_policy *p = c->p;
	char q[QBUF];

	for (size_t i = 0; i < p->nnet; i++) {
		if (!same_match(&p->net[i], r))
			continue;
		if (p->net[i].kind != r->kind)
			sh_perr(c, c->line, "conflicting [net] rules for '%s': %s here, %s at line %d",
				sh_policy_quote(q, sizeof(q), v), net_keys[r->kind],
				net_keys[p->net[i].kind], p->net[i].line);
		return;   /* an exact duplicate: keep the first */
	}
	if (p->nnet >= SH_MAX_NET_RULES_PER_POLICY) {
		sh_perr(c, c->line, "too many [net] rules (max %d)", SH_MAX_NET_RULES_PER_POLICY);
		return;
	}
	if (p->nnet == c->net_cap) {
		size_t cap = c->net_cap ? 2 * c->net_cap : 8;
		struct sh_net_rule *n = realloc(p->net, cap * sizeof(*n));

		if (!n) {
			sh_pctx_oom(c);
			return;
		}
		p->net = n;
		c->net_cap = cap;
	}
	p->net[p->nnet++] = *r;
}

void sh_policy_add_net(struct pctx *c, const char *key, const char *v)
{
	char buf[LINE_BUF], q[QBUF], *save = NULL, *w[4] = { 0 };
	struct sh_net_rule r = { .line = c->line };
	int n = 0;

	r.kind = !strcmp(key, "connect") ? SH_NETR_CONNECT :
		 !strcmp(key, "deny") ? SH_NETR_DENY : SH_NETR_BIND;
	if (!strcmp(v, "none") && r.kind != SH_NETR_DENY) {
		/* The allowlist on, with nothing in it. */
		c->p->net_none[r.kind == SH_NETR_BIND] = c->line;
		return;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, " \t", &save); t && n < 4; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (n < 2 || n > 3) {
		sh_perr(c, c->line, "bad [net] rule '%s' (want PROTO ADDRESS[/PREFIX] "
			"[PORT[-PORT]], e.g. 'tcp 10.0.0.0/8 443')", sh_policy_quote(q, sizeof(q), v));
		return;
	}
	if (!parse_proto(w[0], &r.proto)) {
		sh_perr(c, c->line, "bad protocol '%s' (want tcp, udp or any)",
			sh_policy_quote(q, sizeof(q), w[0]));
		return;
	}
	if (parse_addr(c, w[1], &r) && parse_ports(c, w[2], &r))
		store(c, &r, v);
}

/* Does a's prefix contain b's? */
bool sh_net_rule_covers(const struct sh_net_rule *a, const struct sh_net_rule *b)
{
	return a->prefix <= b->prefix && same_bits(a->addr, b->addr, a->prefix);
}

/* Every address prefix is covered by at most SH_NET_RULES_PER_KEY rules of
 * its trie: the map holds that many per prefix. */
void sh_policy_net_finish(struct pctx *c)
{
	const struct sh_policy *p = c->p;

	for (size_t i = 0; i < p->nnet; i++)
		if (p->net[i].kind != SH_NETR_DENY && p->net_none[p->net[i].kind == SH_NETR_BIND]) {
			sh_perr(c, p->net[i].line, "a [net] %s rule, and '%s = none' at line %d",
				net_keys[p->net[i].kind], net_keys[p->net[i].kind],
				p->net_none[p->net[i].kind == SH_NETR_BIND]);
			return;
		}
	for (size_t i = 0; i < p->nnet; i++) {
		size_t n = 0;

		for (size_t j = 0; j < p->nnet; j++)
			if ((p->net[i].kind == SH_NETR_BIND) == (p->net[j].kind == SH_NETR_BIND) &&
			    sh_net_rule_covers(&p->net[j], &p->net[i]))
				n++;
		if (n > SH_NET_RULES_PER_KEY) {
			sh_perr(c, p->net[i].line, "%zu [net] rules cover this rule's addresses; "
				"at most %d can", n, SH_NET_RULES_PER_KEY);
			return;
		}
	}
}
