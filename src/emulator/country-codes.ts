/**
 * Alpha-3 code used in World Bank bulk files -> the 2-character `country.id` the live World Bank
 * API answers with. For countries that id is ISO 3166-1 alpha-2 (plus the World Bank's own XK for
 * Kosovo and JG for the Channel Islands); aggregates have World Bank ids such as 1W for World.
 * Kosovo appears as KSV in older files and XKX in newer ones, so both are listed.
 */
export const WB_ID_BY_ALPHA3: Readonly<Record<string, string>> = {
  // Countries and territories
  ABW: 'AW', AFG: 'AF', AGO: 'AO', ALB: 'AL', AND: 'AD', ARE: 'AE', ARG: 'AR', ARM: 'AM',
  ASM: 'AS', ATG: 'AG', AUS: 'AU', AUT: 'AT', AZE: 'AZ', BDI: 'BI', BEL: 'BE', BEN: 'BJ',
  BFA: 'BF', BGD: 'BD', BGR: 'BG', BHR: 'BH', BHS: 'BS', BIH: 'BA', BLR: 'BY', BLZ: 'BZ',
  BMU: 'BM', BOL: 'BO', BRA: 'BR', BRB: 'BB', BRN: 'BN', BTN: 'BT', BWA: 'BW', CAF: 'CF',
  CAN: 'CA', CHE: 'CH', CHI: 'JG', CHL: 'CL', CHN: 'CN', CIV: 'CI', CMR: 'CM', COD: 'CD',
  COG: 'CG', COL: 'CO', COM: 'KM', CPV: 'CV', CRI: 'CR', CUB: 'CU', CUW: 'CW', CYM: 'KY',
  CYP: 'CY', CZE: 'CZ', DEU: 'DE', DJI: 'DJ', DMA: 'DM', DNK: 'DK', DOM: 'DO', DZA: 'DZ',
  ECU: 'EC', EGY: 'EG', ERI: 'ER', ESP: 'ES', EST: 'EE', ETH: 'ET', FIN: 'FI', FJI: 'FJ',
  FRA: 'FR', FRO: 'FO', FSM: 'FM', GAB: 'GA', GBR: 'GB', GEO: 'GE', GHA: 'GH', GIB: 'GI',
  GIN: 'GN', GMB: 'GM', GNB: 'GW', GNQ: 'GQ', GRC: 'GR', GRD: 'GD', GRL: 'GL', GTM: 'GT',
  GUM: 'GU', GUY: 'GY', HKG: 'HK', HND: 'HN', HRV: 'HR', HTI: 'HT', HUN: 'HU', IDN: 'ID',
  IMN: 'IM', IND: 'IN', IRL: 'IE', IRN: 'IR', IRQ: 'IQ', ISL: 'IS', ISR: 'IL', ITA: 'IT',
  JAM: 'JM', JOR: 'JO', JPN: 'JP', KAZ: 'KZ', KEN: 'KE', KGZ: 'KG', KHM: 'KH', KIR: 'KI',
  KNA: 'KN', KOR: 'KR', KSV: 'XK', KWT: 'KW', LAO: 'LA', LBN: 'LB', LBR: 'LR', LBY: 'LY',
  LCA: 'LC', LIE: 'LI', LKA: 'LK', LSO: 'LS', LTU: 'LT', LUX: 'LU', LVA: 'LV', MAC: 'MO',
  MAF: 'MF', MAR: 'MA', MCO: 'MC', MDA: 'MD', MDG: 'MG', MDV: 'MV', MEX: 'MX', MHL: 'MH',
  MKD: 'MK', MLI: 'ML', MLT: 'MT', MMR: 'MM', MNE: 'ME', MNG: 'MN', MNP: 'MP', MOZ: 'MZ',
  MRT: 'MR', MUS: 'MU', MWI: 'MW', MYS: 'MY', NAM: 'NA', NCL: 'NC', NER: 'NE', NGA: 'NG',
  NIC: 'NI', NLD: 'NL', NOR: 'NO', NPL: 'NP', NRU: 'NR', NZL: 'NZ', OMN: 'OM', PAK: 'PK',
  PAN: 'PA', PER: 'PE', PHL: 'PH', PLW: 'PW', PNG: 'PG', POL: 'PL', PRI: 'PR', PRK: 'KP',
  PRT: 'PT', PRY: 'PY', PSE: 'PS', PYF: 'PF', QAT: 'QA', ROU: 'RO', RUS: 'RU', RWA: 'RW',
  SAU: 'SA', SDN: 'SD', SEN: 'SN', SGP: 'SG', SLB: 'SB', SLE: 'SL', SLV: 'SV', SMR: 'SM',
  SOM: 'SO', SRB: 'RS', SSD: 'SS', STP: 'ST', SUR: 'SR', SVK: 'SK', SVN: 'SI', SWE: 'SE',
  SWZ: 'SZ', SXM: 'SX', SYC: 'SC', SYR: 'SY', TCA: 'TC', TCD: 'TD', TGO: 'TG', THA: 'TH',
  TJK: 'TJ', TKM: 'TM', TLS: 'TL', TON: 'TO', TTO: 'TT', TUN: 'TN', TUR: 'TR', TUV: 'TV',
  TZA: 'TZ', UGA: 'UG', UKR: 'UA', URY: 'UY', USA: 'US', UZB: 'UZ', VCT: 'VC', VEN: 'VE',
  VGB: 'VG', VIR: 'VI', VNM: 'VN', VUT: 'VU', WSM: 'WS', XKX: 'XK', YEM: 'YE', ZAF: 'ZA',
  ZMB: 'ZM', ZWE: 'ZW',
  // Aggregates (regions, income and lending groups, demographic dividend groups)
  ARB: '1A', CEB: 'B8', CSS: 'S3', EAP: '4E', EAR: 'V2', EAS: 'Z4', ECA: '7E', ECS: 'Z7',
  EMU: 'XC', EUU: 'EU', FCS: 'F1', HIC: 'XD', HPC: 'XE', IBD: 'XF', IBT: 'ZT', IDA: 'XG',
  IDB: 'XH', IDX: 'XI', INX: 'XY', LAC: 'XJ', LCN: 'ZJ', LDC: 'XL', LIC: 'XM', LMC: 'XN',
  LMY: 'XO', LTE: 'V4', MEA: 'ZQ', MIC: 'XP', MNA: 'XQ', NAC: 'XU', NOC: 'XR', OEC: 'XS',
  OED: 'OE', OSS: 'S4', PRE: 'V1', PSS: 'S2', PST: 'V3', SAS: '8S', SSA: 'ZF', SSF: 'ZG',
  SST: 'S1', TEA: 'T4', TEC: 'T7', TLA: 'T2', TMN: 'T3', TSA: 'T5', TSS: 'T6', UMC: 'XT',
  WLD: '1W',
};

const KNOWN_WB_IDS: ReadonlySet<string> = new Set(Object.values(WB_ID_BY_ALPHA3));

/**
 * A request code (alpha-2, alpha-3 or World Bank id) -> World Bank id, or null when unknown.
 * Countries' World Bank ids are their alpha-2 codes, so one 2-character lookup serves both.
 */
export function wbIdOf(code: string): string | null {
  const upper = code.toUpperCase();
  if (upper.length === 3) return WB_ID_BY_ALPHA3[upper] ?? null;
  if (upper.length === 2) return KNOWN_WB_IDS.has(upper) ? upper : null;
  return null;
}
