#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""prices-offer.py N DIR - write a made-up EC2 offer file of N products in
AWS's two Price List forms, DIR/offer.json and DIR/offer.csv (the same
offer), for bench/prices.sh.

The layout is AWS's (the CSV's 91-column header of AmazonEC2's index.csv
of 2025-09, the JSON's "key" : value pretty print, products then terms);
the products are 20 regions x N/200 instance types x 10 variants, of
which one (Linux, Shared, no pre-installed software, capacity Used) is
kept by `jobtrace prices import`.  Each product has an on-demand term and
two Reserved terms of two price dimensions each, as most of AWS's do, so
the kept prices are a small part of the file, as in the real one.  The
table it should give goes to DIR/want.tsv (without the comment lines).
"""
import sys

N, OUT = int(sys.argv[1]), sys.argv[2]
HEADER = ("SKU,OfferTermCode,RateCode,TermType,PriceDescription,EffectiveDate,StartingRange,EndingRange,Unit,"
          "PricePerUnit,Currency,RelatedTo,LeaseContractLength,PurchaseOption,OfferingClass,Product Family,serviceCode,"
          "Location,Location Type,Instance Type,Current Generation,Instance Family,vCPU,Physical Processor,Clock Speed,"
          "Memory,Storage,Network Performance,Processor Architecture,Storage Media,Volume Type,Max Volume Size,"
          "Max IOPS/volume,Max IOPS Burst Performance,Max throughput/volume,Provisioned,Tenancy,EBS Optimized,"
          "Operating System,License Model,Group,Group Description,Transfer Type,From Location,From Location Type,"
          "To Location,To Location Type,usageType,operation,AvailabilityZone,CapacityStatus,ClassicNetworkingSupport,"
          "Dedicated EBS Throughput,ECU,Elastic Graphics Type,Enhanced Networking Supported,From Region Code,GPU,"
          "GPU Memory,Instance,Instance Capacity - 10xlarge,Instance Capacity - 12xlarge,Instance Capacity - 16xlarge,"
          "Instance Capacity - 18xlarge,Instance Capacity - 24xlarge,Instance Capacity - 2xlarge,"
          "Instance Capacity - 32xlarge,Instance Capacity - 4xlarge,Instance Capacity - 8xlarge,"
          "Instance Capacity - 9xlarge,Instance Capacity - large,Instance Capacity - medium,"
          "Instance Capacity - metal,Instance Capacity - xlarge,instanceSKU,Intel AVX2 Available,Intel AVX Available,"
          "Intel Turbo Available,MarketOption,Normalization Size Factor,Physical Cores,Pre Installed S/W,"
          "Processor Features,Product Type,Region Code,Resource Type,serviceName,SnapshotArchiveFeeType,"
          "To Region Code,Volume API Name,VPCNetworkingSupport").split(",")
COL = {h: i for i, h in enumerate(HEADER)}
REGIONS = [("us-east-1", "", "US East (N. Virginia)"), ("us-east-2", "USE2-", "US East (Ohio)"),
           ("us-west-1", "USW1-", "US West (N. California)"), ("us-west-2", "USW2-", "US West (Oregon)"),
           ("eu-west-1", "EU-", "EU (Ireland)"), ("eu-west-2", "EUW2-", "EU (London)"),
           ("eu-west-3", "EUW3-", "EU (Paris)"), ("eu-central-1", "EUC1-", "EU (Frankfurt)"),
           ("eu-north-1", "EUN1-", "EU (Stockholm)"), ("eu-south-1", "EUS1-", "EU (Milan)"),
           ("ap-south-1", "APS3-", "Asia Pacific (Mumbai)"), ("ap-northeast-1", "APN1-", "Asia Pacific (Tokyo)"),
           ("ap-northeast-2", "APN2-", "Asia Pacific (Seoul)"), ("ap-northeast-3", "APN3-", "Asia Pacific (Osaka)"),
           ("ap-southeast-1", "APS1-", "Asia Pacific (Singapore)"), ("ap-southeast-2", "APS2-", "Asia Pacific (Sydney)"),
           ("ca-central-1", "CAN1-", "Canada (Central)"), ("sa-east-1", "SAE1-", "South America (Sao Paulo)"),
           ("me-south-1", "MES1-", "Middle East (Bahrain)"), ("af-south-1", "AFS1-", "Africa (Cape Town)")]
SIZES = ["large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal", "medium"]
# (os, tenancy, pre-installed, capacity, usage prefix, operation): the first is the one kept
VARIANTS = [("Linux", "Shared", "NA", "Used", "BoxUsage", "RunInstances"),
            ("Windows", "Shared", "NA", "Used", "BoxUsage", "RunInstances:0002"),
            ("RHEL", "Shared", "NA", "Used", "BoxUsage", "RunInstances:0010"),
            ("SUSE", "Shared", "NA", "Used", "BoxUsage", "RunInstances:000g"),
            ("Linux", "Dedicated", "NA", "Used", "DedicatedUsage", "RunInstances"),
            ("Linux", "Host", "NA", "Used", "HostBoxUsage", "RunInstances"),
            ("Linux", "Shared", "SQL Web", "Used", "BoxUsage", "RunInstances:0200"),
            ("Linux", "Shared", "NA", "UnusedCapacityReservation", "UnusedBox", "RunInstances"),
            ("Linux", "Shared", "NA", "AllocatedCapacityReservation", "Reservation", "RunInstances"),
            ("Windows", "Dedicated", "SQL Std", "Used", "DedicatedUsage", "RunInstances:0006")]
OD, RATE, UPF = "JRTCKXETXF", "6YS6EN2CT7", "2TG2D8R56U"
RES = ["38NPMPTW36", "4NA7Y494T4"]
PUB, VER = "2025-09-12T22:53:08Z", "20250912225308"
ntypes = max(1, N // (len(REGIONS) * len(VARIANTS)))


def products():
    n = 0
    for t in range(ntypes):
        itype = "x%d%s.%s" % (t // len(SIZES) + 1, "gd"[t % 2], SIZES[t % len(SIZES)])
        for ri, (region, pfx, loc) in enumerate(REGIONS):
            base = 0.05 + 0.0125 * t + 0.003 * ri
            for vi, (os_, ten, sw, cap, usage, op) in enumerate(VARIANTS):
                sku = "%016X" % (0x5EED000000000000 + n)
                n += 1
                price = "%.10f" % (base * (1 + 0.4 * vi) if vi != 8 else 0)
                a = {"servicecode": "AmazonEC2", "location": loc, "locationType": "AWS Region", "instanceType": itype,
                     "currentGeneration": "Yes", "instanceFamily": "General purpose", "vcpu": str(2 << (t % 6)),
                     "physicalProcessor": "Intel Xeon Platinum 8375C (Ice Lake)", "clockSpeed": "3.5 GHz",
                     "memory": "%d GiB" % (8 << (t % 6)), "storage": "EBS only",
                     "networkPerformance": "Up to 12500 Megabit", "processorArchitecture": "64-bit",
                     "tenancy": ten, "operatingSystem": os_, "licenseModel": "No License required",
                     "usagetype": pfx + usage + ":" + itype, "operation": op, "availabilityzone": "NA",
                     "capacitystatus": cap, "classicnetworkingsupport": "false",
                     "dedicatedEbsThroughput": "Up to 10000 Mbps", "ecu": "NA",
                     "enhancedNetworkingSupported": "Yes", "instancesku": "", "intelAvxAvailable": "Yes",
                     "intelAvx2Available": "Yes", "intelTurboAvailable": "Yes", "marketoption": "OnDemand",
                     "normalizationSizeFactor": "4", "preInstalledSw": sw,
                     "processorFeatures": "Intel AVX; Intel AVX2; Intel AVX512; Intel Turbo", "regionCode": region,
                     "servicename": "Amazon Elastic Compute Cloud", "vpcnetworkingsupport": "true"}
                yield sku, a, price, (region, itype, vi)


CSVNAME = {"servicecode": "serviceCode", "location": "Location", "locationType": "Location Type",
           "instanceType": "Instance Type", "currentGeneration": "Current Generation",
           "instanceFamily": "Instance Family", "vcpu": "vCPU", "physicalProcessor": "Physical Processor",
           "clockSpeed": "Clock Speed", "memory": "Memory", "storage": "Storage",
           "networkPerformance": "Network Performance", "processorArchitecture": "Processor Architecture",
           "tenancy": "Tenancy", "operatingSystem": "Operating System", "licenseModel": "License Model",
           "usagetype": "usageType", "operation": "operation", "availabilityzone": "AvailabilityZone",
           "capacitystatus": "CapacityStatus", "classicnetworkingsupport": "ClassicNetworkingSupport",
           "dedicatedEbsThroughput": "Dedicated EBS Throughput", "ecu": "ECU",
           "enhancedNetworkingSupported": "Enhanced Networking Supported", "instancesku": "instanceSKU",
           "intelAvxAvailable": "Intel AVX Available", "intelAvx2Available": "Intel AVX2 Available",
           "intelTurboAvailable": "Intel Turbo Available", "marketoption": "MarketOption",
           "normalizationSizeFactor": "Normalization Size Factor", "preInstalledSw": "Pre Installed S/W",
           "processorFeatures": "Processor Features", "regionCode": "Region Code", "servicename": "serviceName",
           "vpcnetworkingsupport": "VPCNetworkingSupport"}


def q(v):
    return "" if v == "" else '"' + v.replace('"', '""') + '"'


def dims(sku, price, a):
    """The price dimensions of each term: (term type, term code, rate code, description, unit, price, lease)."""
    desc = "$%s per On Demand %s %s Instance Hour" % (price.rstrip("0").rstrip("."), a["operatingSystem"],
                                                     a["instanceType"])
    yield "OnDemand", OD, RATE, desc, "Hrs", price, ""
    for k, code in enumerate(RES):
        lease = "1yr" if k == 0 else "3yr"
        yield "Reserved", code, UPF, "Upfront Fee", "Quantity", "%d" % (300 * (k + 1)), lease
        yield ("Reserved", code, RATE, "%s (Amazon VPC), %s reserved instance applied"
               % (a["operatingSystem"], a["instanceType"]), "Hrs", "%.10f" % (float(price) * 0.4), lease)


with open(OUT + "/offer.csv", "w") as c:
    c.write('"FormatVersion","v1.0"\n"Disclaimer","This pricing list is for informational purposes only."\n'
            '"Publication Date","%s"\n"Version","%s"\n"OfferCode","AmazonEC2"\n' % (PUB, VER))
    c.write(",".join(q(h) for h in HEADER) + "\n")
    for sku, a, price, _ in products():
        row = [""] * len(HEADER)
        for k, v in a.items():
            row[COL[CSVNAME[k]]] = v
        row[COL["Product Family"]] = "Compute Instance"
        row[COL["Currency"]] = "USD"
        row[COL["SKU"]] = sku
        for term, code, rate, desc, unit, p, lease in dims(sku, price, a):
            row[COL["TermType"]], row[COL["OfferTermCode"]] = term, code
            row[COL["RateCode"]] = "%s.%s.%s" % (sku, code, rate)
            row[COL["PriceDescription"]], row[COL["Unit"]], row[COL["PricePerUnit"]] = desc, unit, p
            row[COL["LeaseContractLength"]] = lease
            row[COL["StartingRange"]], row[COL["EndingRange"]] = ("0", "Inf") if unit == "Hrs" else ("", "")
            c.write(",".join(q(v) for v in row) + "\n")

with open(OUT + "/offer.json", "w") as j:
    j.write('{\n  "formatVersion" : "v1.0",\n  "disclaimer" : "This pricing list is for informational purposes '
            'only.",\n  "offerCode" : "AmazonEC2",\n  "version" : "%s",\n  "publicationDate" : "%s",\n'
            '  "products" : {\n' % (VER, PUB))
    first = True
    for sku, a, price, _ in products():
        attrs = ",\n".join('        "%s" : "%s"' % kv for kv in a.items())
        j.write('%s    "%s" : {\n      "sku" : "%s",\n      "productFamily" : "Compute Instance",\n'
                '      "attributes" : {\n%s\n      }\n    }' % ("" if first else ",\n", sku, sku, attrs))
        first = False
    j.write('\n  },\n  "terms" : {\n')
    for tt in ("OnDemand", "Reserved"):
        j.write('    "%s" : {\n' % tt)
        first = True
        for sku, a, price, _ in products():
            terms = {}
            for term, code, rate, desc, unit, p, lease in dims(sku, price, a):
                if term == tt:
                    terms.setdefault(code, []).append((rate, desc, unit, p))
            out = []
            for code, ds in terms.items():
                dd = ",\n".join('            "%s.%s.%s" : {\n              "rateCode" : "%s.%s.%s",\n'
                                '              "description" : "%s",\n              "beginRange" : "0",\n'
                                '              "endRange" : "Inf",\n              "unit" : "%s",\n'
                                '              "pricePerUnit" : {\n                "USD" : "%s"\n              },\n'
                                '              "appliesTo" : [ ]\n            }'
                                % (sku, code, rate, sku, code, rate, desc, unit, p) for rate, desc, unit, p in ds)
                out.append('        "%s.%s" : {\n          "offerTermCode" : "%s",\n          "sku" : "%s",\n'
                           '          "effectiveDate" : "2025-09-01T00:00:00Z",\n          "priceDimensions" : {\n'
                           '%s\n          },\n          "termAttributes" : { }\n        }' % (sku, code, code, sku, dd))
            j.write('%s      "%s" : {\n%s\n      }' % ("" if first else ",\n", sku, ",\n".join(out)))
            first = False
        j.write('\n    }%s\n' % ("," if tt == "OnDemand" else ""))
    j.write('  }\n}\n')

with open(OUT + "/want.tsv", "w") as w:
    rows = sorted((r, t, p) for _, _, p, (r, t, vi) in products() if vi == 0)
    for r, t, p in rows:
        w.write("%s\t%s\t%s\t-\tUSD\n" % (r, t, p.rstrip("0").rstrip(".")))
