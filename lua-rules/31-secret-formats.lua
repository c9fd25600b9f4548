-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 31-secret-formats.lua - the formats of tokens people leak, redacted
-- wherever they stand: an argument, a URL, a query string, a header, a word
-- of a shell string, a string literal of code.
--
-- Each entry: lib.secret_format{ name, start, pattern, doc [, icase, left,
-- check] }.  start is the literal text a token begins with (matched case
-- sensitively unless icase, and by default only where no letter or digit
-- stands just before it); pattern is a Lua pattern anchored there that
-- covers the token; two position captures "()" in it name the bytes to
-- replace when only part of the match is secret (a PEM block keeps its
-- BEGIN and END lines).  check(token) may refuse a match.  A site adds its
-- own formats the same way in a later file (35-site-formats.lua); nothing
-- needs a rebuild.
--
-- The list was written from the formats the vendors document and from what
-- the secret scanners look for: gitleaks' default rules
-- (config/gitleaks.toml, rule ids in doc=) and trufflehog's detectors
-- (pkg/detectors/NAME).  The patterns are ours, in Lua's pattern
-- language: no alternation, so a format with several prefixes is several
-- entries, and x(class, n) repeats a class n times.  Lengths are minimums
-- (a token may grow; the pattern takes what follows of the same class),
-- so that a cut or a longer new version is still caught.

local rep, find = string.rep, string.find
local fmt = lib.secret_format

-- class repeated n times
local function x(class, n) return rep(class, n) end
-- letters and digits both (a random token, not a word)
local function mixed(t) return find(t, "%d") ~= nil and find(t, "%a") ~= nil end

-- The text behind base64 (standard or URL alphabet), or nil.
local b64 = {}
do
	local a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i = 1, 64 do b64[string.byte(a, i)] = i - 1 end
	b64[string.byte("-")] = 62
	b64[string.byte("_")] = 63
end
local function unbase64(s)
	local out, bits, nb = {}, 0, 0
	for i = 1, #s do
		local c = string.byte(s, i)
		if c == 61 then break end	-- "="
		local v = b64[c]
		if v == nil then return nil end
		bits = (bits << 6) | v
		nb = nb + 6
		if nb >= 8 then
			nb = nb - 8
			out[#out + 1] = string.char((bits >> nb) & 255)
		end
	end
	return table.concat(out)
end
lib.unbase64 = unbase64

-- A basic-auth blob is base64 of "user:password".
local function basic_auth(t)
	local b = string.match(t, "([%w+/=_%-]+)$")
	local s = b and unbase64(b)
	return s ~= nil and find(s, ":", 1, true) ~= nil and not find(s, "[%c]")
end

-- Cloud providers ---------------------------------------------------------
-- AWS access key ids: 4-letter type prefix + 16 upper-case letters/digits
-- (gitleaks aws-access-token; AWS IAM docs "Understanding unique ID prefixes")
for _, p in ipairs { "AKIA", "ASIA", "ABIA", "ACCA" } do
	fmt { name = "aws-access-key-id", start = p,
		pattern = p .. x("[%u%d]", 16) .. "%f[^%w]",
		doc = "AWS IAM unique ID prefixes; gitleaks aws-access-token" }
end
fmt { name = "aws-access-key-id", start = "A3T", pattern = "A3T[%u%d]" .. x("[%u%d]", 16) .. "%f[^%w]",
	doc = "gitleaks aws-access-token (A3T)" }
fmt { name = "google-api-key", start = "AIza", pattern = "AIza" .. x("[%w_%-]", 35),
	doc = "Google Cloud API keys; gitleaks gcp-api-key" }
fmt { name = "google-oauth-client-secret", start = "GOCSPX-",
	pattern = "GOCSPX%-" .. x("[%w_%-]", 24) .. "[%w_%-]*",
	doc = "Google OAuth client secrets" }
fmt { name = "google-oauth-access-token", start = "ya29.",
	pattern = "ya29%." .. x("[%w_%-]", 20) .. "[%w_%-%.]*",
	doc = "Google OAuth 2.0 access tokens" }
fmt { name = "alibaba-access-key-id", start = "LTAI", pattern = "LTAI" .. x("%w", 20),
	doc = "gitleaks alibaba-access-key-id" }
fmt { name = "digitalocean-token", start = "dop_v1_", pattern = "dop_v1_" .. x("%x", 64),
	doc = "gitleaks digitalocean-pat; trufflehog digitaloceanv2" }
fmt { name = "digitalocean-token", start = "doo_v1_", pattern = "doo_v1_" .. x("%x", 64),
	doc = "gitleaks digitalocean-access-token" }
fmt { name = "digitalocean-token", start = "dor_v1_", pattern = "dor_v1_" .. x("%x", 64),
	doc = "gitleaks digitalocean-refresh-token" }
fmt { name = "databricks-token", start = "dapi", pattern = "dapi" .. x("%x", 32) .. "[%-%d]*",
	doc = "gitleaks databricks-api-token" }
fmt { name = "openshift-token", start = "sha256~", pattern = "sha256~" .. x("[%w_%-]", 43),
	doc = "gitleaks openshift-user-token" }
fmt { name = "azure-storage-sas", start = "sig=", icase = true,
	pattern = "[Ss][Ii][Gg]=()[%w%%+/=]+()",
	doc = "Azure shared access signatures (sig= of a SAS URL)" }

-- Source code hosts and package registries ---------------------------------
for _, p in ipairs { "ghp_", "gho_", "ghu_", "ghs_", "ghr_" } do
	fmt { name = "github-token", start = p, pattern = p .. x("%w", 30) .. "%w*",
		doc = "GitHub token prefixes (github.blog 2021-04-05); gitleaks github-pat, github-oauth, github-app-token, github-refresh-token" }
end
fmt { name = "github-fine-grained-pat", start = "github_pat_",
	pattern = "github_pat_" .. x("[%w_]", 22) .. "[%w_]*",
	doc = "gitleaks github-fine-grained-pat" }
for _, p in ipairs { "glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-",
	"glimt-", "glagent-", "gloas-", "glcbt-", "glffct-" } do
	fmt { name = "gitlab-token", start = p,
		pattern = p:gsub("%-", "%%-") .. x("[%w_%-]", 20) .. "[%w_%-%.]*",
		doc = "GitLab token prefixes (docs.gitlab.com security/tokens); gitleaks gitlab-*" }
end
fmt { name = "gitlab-runner-registration", start = "GR1348941",
	pattern = "GR1348941" .. x("[%w_%-]", 20),
	doc = "gitleaks gitlab-rrt" }
fmt { name = "bitbucket-app-password", start = "ATBB", pattern = "ATBB" .. x("%w", 32),
	doc = "Atlassian app passwords" }
fmt { name = "atlassian-api-token", start = "ATATT3", pattern = "ATATT3" .. x("[%w_%-=]", 60) .. "[%w_%-=]*",
	doc = "gitleaks atlassian-api-token" }
fmt { name = "npm-token", start = "npm_", pattern = "npm_" .. x("%w", 36),
	doc = "npm access tokens; gitleaks npm-access-token" }
fmt { name = "pypi-token", start = "pypi-AgE", pattern = "pypi%-AgE" .. x("[%w_%-]", 50) .. "[%w_%-]*",
	doc = "PyPI API tokens (macaroons, pypi-AgEIcHlwaS5vcmc...); gitleaks pypi-upload-token" }
fmt { name = "rubygems-token", start = "rubygems_", pattern = "rubygems_" .. x("%x", 48),
	doc = "gitleaks rubygems-api-token" }
fmt { name = "nuget-key", start = "oy2", pattern = "oy2" .. x("[%l%d]", 43),
	doc = "NuGet API keys" }
fmt { name = "docker-hub-pat", start = "dckr_pat_", pattern = "dckr_pat_" .. x("[%w_%-]", 20) .. "[%w_%-]*",
	doc = "Docker Hub personal access tokens" }
fmt { name = "clojars-token", start = "CLOJARS_", pattern = "CLOJARS_" .. x("%w", 60),
	doc = "gitleaks clojars-api-token" }
fmt { name = "artifactory-key", start = "AKCp", pattern = "AKCp" .. x("%w", 60) .. "%w*",
	doc = "gitleaks artifactory-api-key" }
fmt { name = "artifactory-reference-token", start = "cmVmd", pattern = "cmVmd" .. x("%w", 59),
	doc = "gitleaks artifactory-reference-token" }
fmt { name = "circleci-token", start = "CCIPAT_", pattern = "CCIPAT_" .. x("[%w_]", 20) .. "[%w_%.]*",
	doc = "CircleCI personal API tokens" }

-- Chat, mail, payments -----------------------------------------------------
for _, p in ipairs { "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxo-",
	"xoxe.xox" } do
	fmt { name = "slack-token", start = p,
		pattern = p:gsub("[%-%.]", "%%%0") .. x("[%w%-]", 10) .. "[%w%-]*",
		doc = "Slack token types (api.slack.com/authentication/token-types); gitleaks slack-*" }
end
fmt { name = "slack-app-token", start = "xapp-", pattern = "xapp%-%d%-" .. x("[%w%-]", 10) .. "[%w%-]*",
	doc = "gitleaks slack-app-token" }
fmt { name = "slack-webhook", start = "hooks.slack.com/", pattern = "hooks%.slack%.com/()[%w/+]+()",
	left = false, doc = "Slack incoming webhook URLs; gitleaks slack-webhook-url" }
fmt { name = "telegram-bot-token", start = "api.telegram.org/bot", left = false,
	pattern = "api%.telegram%.org/bot%d+:()[%w_%-]+()",
	doc = "Telegram Bot API URLs: https://api.telegram.org/bot<id>:<token>/METHOD" }
fmt { name = "discord-webhook", start = "discord.com/api/webhooks/",
	pattern = "discord%.com/api/webhooks/%d+/()[%w_%-]+()", left = false,
	doc = "Discord webhook URLs: the part after the id is its token" }
for _, p in ipairs { "sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_", "whsec_" } do
	fmt { name = "stripe-key", start = p, pattern = p .. x("%w", 10) .. "%w*",
		doc = "Stripe API keys (stripe.com/docs/keys); gitleaks stripe-access-token" }
end
fmt { name = "sendgrid-key", start = "SG.", pattern = "SG%." .. x("[%w_%-]", 16) .. "[%w_%-]*%." .. x("[%w_%-]", 20) .. "[%w_%-]*",
	doc = "gitleaks sendgrid-api-token; trufflehog sendgrid" }
fmt { name = "twilio-api-key", start = "SK", pattern = "SK" .. x("%x", 32) .. "%f[^%w]",
	doc = "gitleaks twilio-api-key" }
fmt { name = "mailgun-key", start = "key-", pattern = "key%-" .. x("[%l%d]", 32) .. "%f[^%w]",
	doc = "trufflehog mailgun (key- + 32)" }
fmt { name = "sendinblue-key", start = "xkeysib-", pattern = "xkeysib%-" .. x("%x", 64) .. "%-" .. x("%w", 16),
	doc = "gitleaks sendinblue-api-token" }
fmt { name = "shopify-token", start = "shpat_", pattern = "shpat_" .. x("%x", 32), doc = "gitleaks shopify-access-token" }
fmt { name = "shopify-token", start = "shpca_", pattern = "shpca_" .. x("%x", 32), doc = "gitleaks shopify-custom-access-token" }
fmt { name = "shopify-token", start = "shppa_", pattern = "shppa_" .. x("%x", 32), doc = "gitleaks shopify-private-app-access-token" }
fmt { name = "shopify-token", start = "shpss_", pattern = "shpss_" .. x("%x", 32), doc = "gitleaks shopify-shared-secret" }
fmt { name = "square-token", start = "sq0atp-", pattern = "sq0atp%-" .. x("[%w_%-]", 22) .. "[%w_%-]*", doc = "gitleaks square-access-token" }
fmt { name = "square-token", start = "sq0csp-", pattern = "sq0csp%-" .. x("[%w_%-]", 40) .. "[%w_%-]*", doc = "Square OAuth secrets" }


-- AI and data services -----------------------------------------------------
fmt { name = "anthropic-key", start = "sk-ant-", pattern = "sk%-ant%-" .. x("[%w_%-]", 32) .. "[%w_%-]*",
	doc = "gitleaks anthropic-api-key, anthropic-admin-api-key" }
fmt { name = "openai-key", start = "sk-proj-", pattern = "sk%-proj%-" .. x("[%w_%-]", 32) .. "[%w_%-]*",
	doc = "OpenAI project keys; gitleaks openai-api-key" }
fmt { name = "openai-key", start = "sk-svcacct-", pattern = "sk%-svcacct%-" .. x("[%w_%-]", 32) .. "[%w_%-]*",
	doc = "OpenAI service account keys" }
fmt { name = "sk-key", start = "sk-", pattern = "sk%-" .. x("[%w_%-]", 32) .. "[%w_%-]*",
	check = mixed,
	doc = "sk- keys of OpenAI, DeepSeek, OpenRouter and others (letters and digits mixed, 32 or more)" }
fmt { name = "huggingface-token", start = "hf_", pattern = "hf_" .. x("%w", 30) .. "%w*",
	doc = "Hugging Face user access tokens; gitleaks huggingface-access-token; trufflehog huggingface" }
fmt { name = "huggingface-org-token", start = "api_org_", pattern = "api_org_" .. x("%w", 30) .. "%w*",
	doc = "gitleaks huggingface-organization-api-token" }
fmt { name = "groq-key", start = "gsk_", pattern = "gsk_" .. x("%w", 40) .. "%w*", doc = "Groq API keys" }
fmt { name = "xai-key", start = "xai-", pattern = "xai%-" .. x("%w", 40) .. "%w*", doc = "xAI API keys" }
fmt { name = "perplexity-key", start = "pplx-", pattern = "pplx%-" .. x("%w", 40) .. "%w*", doc = "gitleaks perplexity-api-key" }
fmt { name = "replicate-token", start = "r8_", pattern = "r8_" .. x("%w", 30) .. "%w*", doc = "Replicate API tokens" }
fmt { name = "notion-token", start = "ntn_", pattern = "ntn_" .. x("%w", 40) .. "%w*", doc = "gitleaks notion-api-token" }
fmt { name = "notion-token", start = "secret_", pattern = "secret_" .. x("%w", 43) .. "%f[^%w]",
	doc = "Notion internal integration secrets (secret_ + 43)" }
fmt { name = "linear-key", start = "lin_api_", pattern = "lin_api_" .. x("%w", 40), doc = "gitleaks linear-api-key" }
fmt { name = "postman-key", start = "PMAK-", pattern = "PMAK%-" .. x("%x", 24) .. "%-" .. x("%x", 34), doc = "gitleaks postman-api-token" }
fmt { name = "grafana-token", start = "glc_", pattern = "glc_" .. x("[%w+/]", 32) .. "[%w+/]*=*", doc = "gitleaks grafana-cloud-api-token" }
fmt { name = "grafana-token", start = "glsa_", pattern = "glsa_" .. x("%w", 32) .. "_" .. x("%x", 8), doc = "gitleaks grafana-service-account-token" }
fmt { name = "sentry-token", start = "sntrys_", pattern = "sntrys_" .. x("[%w+/=_]", 40) .. "[%w+/=_]*", doc = "gitleaks sentry-org-token" }
fmt { name = "sentry-token", start = "sntryu_", pattern = "sntryu_" .. x("%x", 64), doc = "gitleaks sentry-user-token" }
fmt { name = "newrelic-key", start = "NRAK-", pattern = "NRAK%-" .. x("%w", 27), doc = "New Relic user API keys" }
fmt { name = "doppler-token", start = "dp.pt.", pattern = "dp%.pt%." .. x("%w", 40) .. "%w*", doc = "gitleaks doppler-api-token" }
fmt { name = "dynatrace-token", start = "dt0c01.", pattern = "dt0c01%." .. x("%w", 24) .. "%." .. x("%w", 64), doc = "gitleaks dynatrace-api-token" }
fmt { name = "pulumi-token", start = "pul-", pattern = "pul%-" .. x("%x", 40), doc = "gitleaks pulumi-api-token" }
fmt { name = "heroku-key", start = "HRKU-", pattern = "HRKU%-" .. x("[%w_%-]", 40) .. "[%w_%-]*", doc = "gitleaks heroku-api-key-v2" }
fmt { name = "planetscale-token", start = "pscale_", pattern = "pscale_%l+_" .. x("[%w_%.%-=]", 32) .. "[%w_%.%-=]*",
	doc = "gitleaks planetscale-api-token, -password, -oauth-token" }
fmt { name = "tailscale-key", start = "tskey-", pattern = "tskey%-" .. x("[%w%-]", 20) .. "[%w%-]*", doc = "Tailscale auth and API keys" }
fmt { name = "supabase-token", start = "sbp_", pattern = "sbp_" .. x("%x", 40), doc = "Supabase access tokens" }
fmt { name = "figma-token", start = "figd_", pattern = "figd_" .. x("[%w_%-]", 30) .. "[%w_%-]*", doc = "Figma personal access tokens" }
fmt { name = "fly-token", start = "fo1_", pattern = "fo1_" .. x("[%w_%-]", 40) .. "[%w_%-]*", doc = "gitleaks flyio-access-token" }
fmt { name = "fly-token", start = "FlyV1 ", pattern = "FlyV1 ()[%w_%-+/=,]+()", doc = "Fly.io macaroon tokens" }
fmt { name = "mapbox-secret-token", start = "sk.eyJ", pattern = "sk%.eyJ" .. x("[%w_%-]", 20) .. "[%w_%-%.]*", doc = "Mapbox secret tokens" }
fmt { name = "age-secret-key", start = "AGE-SECRET-KEY-1", pattern = "AGE%-SECRET%-KEY%-1" .. x("[%u%d]", 58), doc = "gitleaks age-secret-key" }
fmt { name = "1password-token", start = "ops_eyJ", pattern = "ops_eyJ" .. x("[%w+/]", 40) .. "[%w+/]*=*", doc = "gitleaks 1password-service-account-token" }
fmt { name = "vault-token", start = "hvs.", pattern = "hvs%." .. x("[%w_%-]", 24) .. "[%w_%-]*", doc = "HashiCorp Vault service tokens; gitleaks vault-service-token" }
fmt { name = "vault-token", start = "hvb.", pattern = "hvb%." .. x("[%w_%-]", 24) .. "[%w_%-]*", doc = "gitleaks vault-batch-token" }
fmt { name = "vault-token", start = "hvr.", pattern = "hvr%." .. x("[%w_%-]", 24) .. "[%w_%-]*", doc = "Vault recovery tokens" }
fmt { name = "terraform-token", start = ".atlasv1.", left = false,
	pattern = "%.atlasv1%.()" .. x("[%w_%-=]", 60) .. "[%w_%-=]*()", doc = "gitleaks hashicorp-tf-api-token (the part after .atlasv1.)" }

-- Structured tokens ------------------------------------------------------------
-- JWT: base64url JSON header "{..." (eyJ) . payload (eyJ) . signature
fmt { name = "jwt", start = "eyJ",
	pattern = "eyJ" .. x("[%w_%-]", 10) .. "[%w_%-]*%.eyJ" .. x("[%w_%-]", 10) .. "[%w_%-]*%.?[%w_%-]*",
	doc = "RFC 7519 compact JWS; gitleaks jwt; trufflehog jwt" }
-- PEM private keys (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK): the
-- body goes, the BEGIN and END lines stay; a cut block to its end
fmt { name = "private-key", start = "-----BEGIN ", left = false,
	pattern = "%-%-%-%-%-BEGIN [%u%d ]*PRIVATE KEY[%u ]*%-%-%-%-%-()[^%-]*()",
	doc = "RFC 7468 PEM; gitleaks private-key" }
fmt { name = "putty-private-key", start = "Private-Lines:", left = false,
	pattern = "Private%-Lines:%s*%d*()[%w%s+/=]*()",
	doc = "PuTTY .ppk private key lines" }
-- a basic-auth blob: "Basic" and base64 of user:password (RFC 7617)
fmt { name = "basic-auth", start = "Basic ", icase = true,
	pattern = "[Bb][Aa][Ss][Ii][Cc]%s+()[%w+/]+=*()", check = basic_auth,
	doc = "RFC 7617 Basic credentials (base64 of user:password)" }

local t = "ab12" .. "cd34"
jobtrace.selftest { argv = { "tool", "--x", "gh" .. "p_" .. rep(t, 5) },
	expect = { argv = { "tool", "--x", "[REDACTED]" } } }
jobtrace.selftest { argv = { "tool", "AKI" .. "A" .. rep("Z9", 8) .. ":" .. "xyz" },
	expect = { argv = { "tool", "[REDACTED]:xyz" } } }
jobtrace.selftest { argv = { "tool", "-----BEGIN RSA PRIVATE" .. " KEY-----\nMIIB" .. t .. "\n-----END RSA PRIVATE KEY-----" },
	expect = { argv = { "tool", "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----" } } }
jobtrace.selftest { argv = { "tool", "--auth", "x", "Basic " .. "YWxpY2U6" .. "czNjcjN0" },
	expect = { argv = { "tool", "--auth", "[REDACTED]", "Basic [REDACTED]" } } }
jobtrace.selftest { argv = { "tool", "basic statistics", "sk-learn", "task-1234567890123456789012345678901234" },
	expect = { argv = { "tool", "basic statistics", "sk-learn", "task-1234567890123456789012345678901234" } } }
