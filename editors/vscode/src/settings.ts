/** Reads the `coder` settings section through the VS Code API. */
import * as vscode from 'vscode';
import { buildServerConfig, type LaunchConfig, launchConfig, type ServerConfig } from './config';

export function coderConfig(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('coder');
}

export function serverConfig(): ServerConfig {
  return buildServerConfig(coderConfig());
}

export function serverLaunch(): LaunchConfig {
  return launchConfig(coderConfig());
}
