/** Editor settings → what the server reads (initializationOptions / didChangeConfiguration). */

export interface GraphmendSettings {
  select: string[];
  ignore: string[];
  run: "onType" | "onSave";
  moduleForwardIsCompiled: boolean | null;
  maxFileSizeKb: number | null;
  assumeTraining: boolean | null;
  assumeDtypes: string[];
  layerSkip: "where" | "cond" | null;
  cudaGraphs: "auto" | "always" | "never" | null;
  torchVersion: string | null;
  moduleBases: string[];
  index: boolean;
  closedFiles: boolean;
}

/** Only what the user set: empty lists and null mean "use pyproject.toml or the defaults". */
export function serverOptions(settings: GraphmendSettings): { graphmend: Record<string, unknown> } {
  const graphmend: Record<string, unknown> = { run: settings.run, index: settings.index, closedFiles: settings.closedFiles };
  if (settings.select.length > 0) graphmend.select = settings.select;
  if (settings.ignore.length > 0) graphmend.ignore = settings.ignore;
  if (settings.moduleForwardIsCompiled !== null) graphmend.moduleForwardIsCompiled = settings.moduleForwardIsCompiled;
  if (settings.maxFileSizeKb !== null) graphmend.maxFileSizeKb = settings.maxFileSizeKb;
  if (settings.assumeTraining !== null) graphmend.assumeTraining = settings.assumeTraining;
  if (settings.assumeDtypes.length > 0) graphmend.assumeDtypes = settings.assumeDtypes;
  if (settings.layerSkip !== null) graphmend.layerSkip = settings.layerSkip;
  if (settings.cudaGraphs !== null) graphmend.cudaGraphs = settings.cudaGraphs;
  if (settings.torchVersion !== null) graphmend.torchVersion = settings.torchVersion;
  if (settings.moduleBases.length > 0) graphmend.moduleBases = settings.moduleBases;
  return { graphmend };
}
